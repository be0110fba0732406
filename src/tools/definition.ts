/**
 * The shape `mcp-taskgen` emits for each decorated method, and the only thing the runtime
 * knows about user code. Generated modules hold data and one `invoke` arrow per tool; all
 * behaviour lives in the runtime.
 */
import type { z } from 'zod';
import type { RetryOptions } from '../engine/attempts.js';
import type { TaskContext } from './context.js';

/** A JSON Schema (draft 2020-12) object, as emitted by the generator. */
export type JsonSchema = { readonly [key: string]: unknown };

/** How the method's return value becomes a `CallToolResult`. */
export type ResultShape =
  /** An object: `structuredContent`, plus its JSON as text content. */
  | 'structured'
  /** A string: one text content block. */
  | 'text'
  /** `void`: an empty content list. */
  | 'none'
  /** Anything else JSON can hold (numbers, arrays, ...): its JSON as text content. */
  | 'json'
  /** `ToolContent` (an array of MCP content blocks): passed through as the result's `content`. */
  | 'content'
  /** A whole `ToolResult` (`content`, optional `structuredContent` and `isError`): passed through. */
  | 'tool-result';

/**
 * Whether a tool runs as a task, as `execution.taskSupport` says on the wire: `forbidden` for
 * `@Tool` methods (always inline), `optional` (the client chooses), `required` (task only).
 */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** A capability a client declares for what it can do on the server's behalf. */
export type ClientCapabilityName = 'elicitation' | 'roots' | 'sampling';

/** A class with any constructor, abstract ones included: the class a tool definition points at. */
// biome-ignore lint/suspicious/noExplicitAny: a class of any constructor signature.
export type AnyClass<T = unknown> = abstract new (...args: any[]) => T;

/**
 * One `@NeedsInput` question in generated code: its name and message, the restricted JSON
 * Schema the client's form is built from, and the zod schema its answer is checked with.
 */
export interface QuestionDefinition {
  readonly name: string;
  readonly message?: string;
  /** The restricted elicitation schema for the answer. */
  readonly schema: JsonSchema;
  readonly answer: z.ZodType;
  /** Asked on the call, before the task is created (see `NeedsInputOptions.upfront`). */
  readonly upfront?: boolean;
}

/**
 * One `ctx.callback<Payload>(name)` hook in generated code: its name, the JSON Schema of its
 * payload, and the zod schema a POSTed body is checked with.
 */
export interface CallbackDefinition {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly payload: z.ZodType;
}

/**
 * One tool as `mcp-taskgen` writes it: the wire description (name, schemas, task support), the
 * zod schemas the runtime validates with, and the `invoke` arrow that calls the method. Written by
 * the generator and read by the runtime; nothing else should build one.
 */
export interface TaskToolDefinition<Target = unknown, Args = unknown> {
  /** Tool name on the wire. */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /** `forbidden` for `@Tool` methods; `optional` or `required` for `@Task` methods. */
  readonly taskSupport: TaskSupport;
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number;
  readonly concurrency?: number;
  /** `@Task({ retry })`: how often the method runs again after it throws (see `TaskOptions.retry`). */
  readonly retry?: RetryOptions;
  /** `@Task({ timeoutMs })`: the longest one attempt may run (see `TaskOptions.timeoutMs`). */
  readonly timeoutMs?: number;
  /**
   * `@Task({ idempotent: true })`: a call without an idempotency key gets one derived from the
   * caller, the tool and its canonical arguments, so a repeat returns the first call's task.
   */
  readonly idempotent?: boolean;
  /** `@Task({ priority })`: 0 (the default) to 1000 (`MAX_PRIORITY`); lower runs first. */
  readonly priority?: number;
  /** `@Task({ priorityFromCall: true })`: a call's `_meta["mcp-task-server/priority"]` counts. */
  readonly priorityFromCall?: boolean;
  /**
   * `@Task({ version })`: the tool's version; unset, the registry derives one from the schemas
   * (see `toolVersionOf`).
   */
  readonly version?: string;
  /**
   * Client capabilities the tool cannot run without. A call from a client that did not declare
   * each of them is refused before anything runs (`-32021`, naming the missing ones), since a
   * server must not rely on a capability the client did not declare. Written by hand; the
   * generator emits none.
   */
  readonly requiresClientCapabilities?: readonly ClientCapabilityName[];
  /**
   * What a caller that cannot receive a task gets from this tool (see `UnawareClientMode`):
   * `auto`, `handle` or `inline`. Unset: the server's setting.
   */
  readonly unawareClients?: 'auto' | 'handle' | 'inline';
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  /** Validates and converts `arguments` into what `invoke` takes. */
  readonly input: z.ZodType<Args>;
  /**
   * Validates what the method returned, when it returns an object (`structured`) or another JSON
   * value (`json`); its output is what goes on the wire (a returned `Date` becomes an ISO string).
   */
  readonly output?: z.ZodType;
  readonly result: ResultShape;
  readonly questions?: readonly QuestionDefinition[];
  /** The `ctx.callback` hooks the method makes, by name (see `CallbackDefinition`). */
  readonly callbacks?: readonly CallbackDefinition[];
  /** The class that declares the method, and the method's name on its prototype. */
  readonly target: { readonly class: AnyClass<Target>; readonly method: string };
  /** Where the method is declared (`src/reports.ts:14:3`), for error messages. */
  readonly source: string;
  /**
   * Calls the method with validated arguments. The context's question and tool maps are erased
   * here: each method declares its own (`TaskContext<{ approval: Approval }, TaskTools>`).
   */
  // biome-ignore lint/suspicious/noExplicitAny: erased question and tool maps, see above.
  invoke(target: Target, args: Args, ctx: TaskContext<any, any>): unknown;
}

/**
 * The `taskManifest` a generated module exports: every tool of the app. Pass it to
 * `createTaskServer`, `runTaskServer`, `createTaskWorker` or `createTestHarness` with the
 * instances its tools run on; regenerate it (`mcp-taskgen`) whenever a decorated class changes.
 */
export interface TaskManifest {
  /** Format version of generated modules; the runtime refuses versions it does not know. */
  readonly formatVersion: 1;
  readonly tools: readonly TaskToolDefinition[];
}

/**
 * The manifest format this runtime reads: generated modules carry it as `formatVersion`, and a
 * module of another version is refused at start-up with a message to regenerate it.
 */
export const MANIFEST_FORMAT_VERSION = 1;

/**
 * Identity function the generated module calls, so that its output type-checks against
 * the runtime's contract where it is written rather than where it is used.
 */
export function defineTaskManifest(manifest: TaskManifest): TaskManifest {
  return manifest;
}

/**
 * Typed helper for one tool entry: checks `invoke` against the zod input type. Generated code
 * wraps each entry in it.
 */
export function defineTaskTool<Target, Args>(tool: TaskToolDefinition<Target, Args>): TaskToolDefinition {
  return tool as TaskToolDefinition;
}

/**
 * For a key the method's type requires but whose value may be `undefined`
 * (`inStock: boolean | undefined`): JSON has no `undefined`, so the key may be absent on the wire,
 * and the parsed object is typed with the key present, as the method declares it. Generated code
 * wraps such properties in it; `.optional()` alone would make the key optional and the method's
 * parameter type would no longer accept the parsed arguments.
 */
export function undefinedValue<T extends z.ZodType>(schema: T): UndefinedValueSchema<T> {
  return schema.optional() as unknown as UndefinedValueSchema<T>;
}

/**
 * What `undefinedValue` returns. An interface rather than a type alias, so that TypeScript
 * resolves it lazily: inside a recursive schema's getter an alias would need the schema's own
 * type before it is known (TS7023).
 */
export interface UndefinedValueSchema<T extends z.ZodType>
  extends z.ZodType<z.output<T> | undefined, z.input<T> | undefined> {}
