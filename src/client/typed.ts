/**
 * The runtime of the typed client `mcp-taskgen --client` generates: one method per tool, typed
 * from the same zod schemas the server validates with. Arguments are `z.input` of the tool's
 * input schema; `result()` resolves with the method's declared return type, decoded and checked
 * by the schema of its output; `answer(key, content)` takes the `@NeedsInput` answer's type.
 */
import type { z } from 'zod';
import { TaskClientError } from './errors.js';
import {
  type CallOptions,
  connectTaskClient,
  type TaskCall,
  type TaskClient,
  type TaskClientOptions,
  type TaskServerTarget,
} from './task-client.js';
import type { CallToolResult, Dialect, TaskQuestion, TaskSnapshot } from './types.js';

/**
 * How the tool's result reaches the client (the generator's result shape): `structured` in
 * `structuredContent`, `json` as JSON text, `text`, `none`, or `raw` (the `CallToolResult`).
 */
export type ResultKind = 'structured' | 'json' | 'text' | 'none' | 'raw';

/** One tool in a generated typed client: its wire name and the zod schemas its calls are typed and checked by. */
export interface ToolSpec {
  readonly tool: string;
  readonly input: z.ZodType;
  readonly result: ResultKind;
  /** Decodes the wire result into the declared type (`structured` and `json` only). */
  readonly output?: z.ZodType;
  /** The answer schema of each `@NeedsInput`, by question name. */
  readonly questions: Readonly<Record<string, z.ZodType>>;
}

/** The tools of a generated typed client, by method name: what `createTypedClient` builds methods from. */
export type ClientSpec = Readonly<Record<string, ToolSpec>>;

type ResultOf<S extends ToolSpec> = S['result'] extends 'structured' | 'json'
  ? S['output'] extends z.ZodType
    ? z.output<S['output']>
    : unknown
  : S['result'] extends 'text'
    ? string
    : S['result'] extends 'none'
      ? undefined
      : CallToolResult;

type QuestionsOf<S extends ToolSpec> = S['questions'];

/** A question key: the name, or the name and how often it was asked (`approval-2`). */
export type QuestionKey<Q> = Extract<keyof Q, string> | `${Extract<keyof Q, string>}-${number}`;

/**
 * What a typed call's `events` yields: the untyped `TaskEvent`s, with each question named by the
 * `@NeedsInput` name it was declared with.
 */
export type TypedTaskEvent<Q> =
  | { readonly type: 'status'; readonly task: TaskSnapshot }
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | {
      readonly type: 'question';
      /** The `@NeedsInput` name the question was declared with. */
      readonly name: Extract<keyof Q, string>;
      readonly question: TaskQuestion;
    };

/** A typed task: `answer` takes the declared answer type, `result` resolves with the return type. */
export interface TypedTaskCall<R, Q extends Readonly<Record<string, z.ZodType>>> {
  readonly taskId: string | undefined;
  readonly dialect: Dialect;
  /** The untyped call underneath. */
  readonly call: TaskCall;
  status(): Promise<TaskSnapshot>;
  readonly events: AsyncIterable<TypedTaskEvent<Q>>;
  answer<K extends Extract<keyof Q, string>>(key: K | `${K}-${number}`, content: z.input<Q[K]>): Promise<void>;
  decline(key: QuestionKey<Q>): Promise<void>;
  cancel(): Promise<TaskSnapshot>;
  /**
   * The method's return value. Rejects with code `tool_error` when the tool failed with an
   * error result, `invalid_result` when the result does not fit the declared type, and as the
   * untyped `result()` does otherwise.
   */
  result(): Promise<R>;
}

type ArgsOf<S extends ToolSpec> =
  // A tool without required arguments may be called without any.
  {} extends z.input<S['input']>
    ? [args?: z.input<S['input']>, options?: CallOptions]
    : [args: z.input<S['input']>, options?: CallOptions];

/**
 * A typed client: one method per tool, typed from the server's own schemas, plus the task client
 * underneath and `close`. The generated `createClient` returns one.
 */
export type TypedClient<Spec extends ClientSpec> = {
  readonly [M in keyof Spec]: (
    ...args: ArgsOf<Spec[M]>
  ) => Promise<TypedTaskCall<ResultOf<Spec[M]>, QuestionsOf<Spec[M]>>>;
} & {
  /** The task client underneath (connected on first use when given a target). */
  tasks(): Promise<TaskClient>;
  close(): Promise<void>;
};

/** Builds the typed client over `spec`; the generated `createClient` calls this. */
export function createTypedClient<Spec extends ClientSpec>(
  spec: Spec,
  target: TaskServerTarget | TaskClient,
  options: TaskClientOptions = {},
): TypedClient<Spec> {
  let connecting: Promise<TaskClient> | undefined = isTaskClient(target) ? Promise.resolve(target) : undefined;
  const tasks = () => {
    connecting ??= connectTaskClient(target as TaskServerTarget, options);
    return connecting;
  };
  const methods = Object.fromEntries(
    Object.entries(spec).map(([name, tool]) => [
      name,
      async (args: Record<string, unknown> = {}, callOptions?: CallOptions) =>
        typedCall(tool, await (await tasks()).call(tool.tool, args, callOptions)),
    ]),
  );
  return {
    ...methods,
    tasks,
    async close() {
      if (connecting) await (await connecting).close();
    },
  } as TypedClient<Spec>;
}

function isTaskClient(target: TaskServerTarget | TaskClient): target is TaskClient {
  return typeof target === 'object' && 'call' in target && typeof target.call === 'function';
}

function typedCall(spec: ToolSpec, call: TaskCall): TypedTaskCall<unknown, Record<string, z.ZodType>> {
  const nameOf = (key: string) => (key in spec.questions ? key : key.replace(/-\d+$/, ''));
  return {
    taskId: call.taskId,
    dialect: call.dialect,
    call,
    status: () => call.status(),
    events: {
      async *[Symbol.asyncIterator]() {
        for await (const event of call.events) {
          if (event.type === 'question') yield { ...event, name: nameOf(event.question.key) };
          else yield event;
        }
      },
    },
    answer: (key, content) => call.answer(key, content as Record<string, unknown>),
    decline: (key) => call.decline(key),
    cancel: () => call.cancel(),
    async result() {
      return decodeResult(spec, await call.result());
    },
  };
}

function decodeResult(spec: ToolSpec, result: CallToolResult): unknown {
  const text = result.content?.find((block) => block.type === 'text')?.text;
  if (result.isError) throw new TaskClientError('tool_error', text ?? `${spec.tool} failed`, result);
  switch (spec.result) {
    case 'none':
      return undefined;
    case 'raw':
      return result;
    case 'text':
      return text ?? '';
    case 'structured':
    case 'json': {
      let wire: unknown = result.structuredContent;
      if (spec.result === 'json') {
        try {
          wire = JSON.parse(text ?? 'null');
        } catch {
          throw new TaskClientError('invalid_result', `${spec.tool} returned text that is not JSON`, result);
        }
      }
      if (!spec.output) return wire;
      const parsed = spec.output.safeParse(wire);
      if (!parsed.success)
        throw new TaskClientError(
          'invalid_result',
          `${spec.tool} returned a result that does not fit its declared type: ${parsed.error.issues
            .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
            .join('; ')}`,
          result,
        );
      return parsed.data;
    }
  }
}
