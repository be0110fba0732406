/**
 * `@Task`, `@Tool` and `@NeedsInput`: inert marks that work under TC39 standard decorators and
 * under `experimentalDecorators`. They record nothing but a mark on the method function
 * (and, when the app has loaded `reflect-metadata`, their options as metadata: metadata.ts);
 * everything else (schemas, names, the call) is read from source by `mcp-taskgen`.
 *
 * Put them above any other decorator on the method: a wrapper applied above would hide the
 * marked function, and the server would refuse to start with a message saying so.
 */
import { addQuestionMark, setMethodMark } from './marks.js';
import {
  type DecoratedMethod,
  NEEDS_INPUT_METADATA_KEY,
  recordMethodMetadata,
  recordQuestionMetadata,
  TASK_METADATA_KEY,
  TOOL_METADATA_KEY,
} from './metadata.js';
import type { NeedsInputOptions, TaskOptions, ToolOptions } from './options.js';

export type { QuestionMetadata } from './metadata.js';
export type { NeedsInputOptions, TaskOptions, TaskRetryOptions, ToolOptions } from './options.js';
export { NEEDS_INPUT_METADATA_KEY, TASK_METADATA_KEY, TOOL_METADATA_KEY };

// biome-ignore lint/suspicious/noExplicitAny: decorators must accept any method signature.
type AnyMethod = (this: any, ...args: any[]) => any;

/** A method decorator usable in both decorator modes. */
export interface MethodDecorator {
  // TC39 standard decorators.
  // biome-ignore lint/suspicious/noExplicitAny: see AnyMethod.
  <M extends AnyMethod>(value: M, context: ClassMethodDecoratorContext<any, M>): void;
  // Legacy `experimentalDecorators`.
  (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): void;
}

function markMethod(apply: (at: DecoratedMethod) => void): MethodDecorator {
  return ((first: unknown, second: unknown, third?: PropertyDescriptor) => {
    // In TC39 mode the second argument is a context object; in legacy mode, the property key.
    const isStandard = typeof second === 'object' && second !== null && 'kind' in second;
    if (isStandard) {
      const context = second as ClassMethodDecoratorContext;
      if (context.kind !== 'method' || context.static) {
        throw new TypeError(
          `@Task, @Tool and @NeedsInput apply to instance methods, not to a ${context.static ? 'static ' : ''}${context.kind}`,
        );
      }
      apply({ method: first as Function });
      return;
    }
    const method = third?.value;
    if (typeof method !== 'function') {
      throw new TypeError(`@Task, @Tool and @NeedsInput apply to methods; '${String(second)}' is not one`);
    }
    apply({ method, legacy: { target: first as object, key: second as string | symbol } });
  }) as MethodDecorator;
}

/**
 * Marks an async method as a task tool: clients may run it in the background and poll it.
 *
 * @example
 * ```ts
 * import { Task, type TaskContext } from 'mcp-task-server';
 *
 * export class Reports {
 *   /** Builds the quarterly report: the doc comment becomes the tool's description. *\/
 *   @Task({ ttlMs: 3_600_000 })
 *   async buildReport(quarter: string, ctx: TaskContext): Promise<{ url: string }> {
 *     ctx.progress(`building ${quarter}`);
 *     return { url: `https://reports.example.com/${quarter}.pdf` };
 *   }
 * }
 * ```
 * @mcpTaskgen task
 */
export function Task(options: TaskOptions = {}): MethodDecorator {
  return markMethod((at) => {
    setMethodMark(at.method, { kind: 'task', options });
    recordMethodMetadata(TASK_METADATA_KEY, options, at);
  });
}

/**
 * Marks a method as an ordinary tool that always answers inline and never becomes a task
 * (`taskSupport: "forbidden"`): for quick lookups next to the long-running `@Task` methods.
 * It gets a `TaskContext` too (its `taskId` is `undefined`).
 *
 * @example
 * ```ts
 * import { Tool } from 'mcp-task-server';
 *
 * export class Reports {
 *   /** Lists the quarters a report can be built for. *\/
 *   @Tool()
 *   async listQuarters(): Promise<string[]> {
 *     return ['2026-Q1', '2026-Q2'];
 *   }
 * }
 * ```
 * @mcpTaskgen tool
 */
export function Tool(options: ToolOptions = {}): MethodDecorator {
  return markMethod((at) => {
    setMethodMark(at.method, { kind: 'tool', options });
    recordMethodMetadata(TOOL_METADATA_KEY, options, at);
  });
}

/**
 * Declares a question the task may ask while it runs. `Answer` is the type of the answer;
 * `mcp-taskgen` turns it into the elicitation schema.
 *
 * @example
 * ```ts
 * import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';
 *
 * export class Deployer {
 *   @Task()
 *   @NeedsInput<{ approve: boolean }>('approval', { message: 'Deploy to production?' })
 *   async deploy(env: string, ctx: TaskContext<{ approval: { approve: boolean } }>): Promise<string> {
 *     const answer = await ctx.input('approval');
 *     return answer.action === 'accept' && answer.content.approve ? `deployed to ${env}` : 'not deployed';
 *   }
 * }
 * ```
 * @mcpTaskgen needsInput
 */
export function NeedsInput<Answer extends object = Record<string, unknown>>(
  name: string,
  options: NeedsInputOptions = {},
): MethodDecorator & { readonly __answer?: Answer } {
  return markMethod((at) => {
    addQuestionMark(at.method, name, options);
    recordQuestionMetadata({ name, ...options }, at);
  });
}
