/**
 * Interop with metadata-driven frameworks (NestJS providers, InversifyJS): when the app has
 * loaded `reflect-metadata`, `@Task`, `@Tool` and `@NeedsInput` also record their options as
 * metadata, so such a framework's discovery can find task tools the way it finds its own
 * handlers. Without `reflect-metadata` this does nothing; the framework never needs it.
 *
 * Where: on the method function (`Reflect.getMetadata(TASK_METADATA_KEY, instance.method)`, as
 * NestJS's `Reflector` reads it), and, under legacy `experimentalDecorators`, also on the
 * prototype and property key (`Reflect.getMetadata(TASK_METADATA_KEY, prototype, 'method')`).
 */
import type { NeedsInputOptions, TaskOptions, ToolOptions } from './options.js';

/** Metadata key of `@Task`: its options (`TaskOptions`, `{}` when none were given). */
export const TASK_METADATA_KEY = 'mcp-task-server:task';
/** Metadata key of `@Tool`: its options (`ToolOptions`). */
export const TOOL_METADATA_KEY = 'mcp-task-server:tool';
/** Metadata key of `@NeedsInput`: every question of the method, in source order (`QuestionMetadata[]`). */
export const NEEDS_INPUT_METADATA_KEY = 'mcp-task-server:needs-input';

/**
 * One `@NeedsInput` question as `reflect-metadata` holds it under `NEEDS_INPUT_METADATA_KEY`: its
 * name and options.
 */
export interface QuestionMetadata extends NeedsInputOptions {
  /** The name `ctx.input(name)` asks it by. */
  readonly name: string;
}

/** Where a decorator found its method: the function, and under legacy decorators its prototype and key. */
export interface DecoratedMethod {
  readonly method: Function;
  readonly legacy?: { readonly target: object; readonly key: string | symbol };
}

/** The part of the `reflect-metadata` API used here. */
interface MetadataApi {
  defineMetadata(key: unknown, value: unknown, target: object, propertyKey?: string | symbol): void;
  getOwnMetadata(key: unknown, target: object, propertyKey?: string | symbol): unknown;
}

function metadataApi(): MetadataApi | undefined {
  const api = Reflect as unknown as Partial<MetadataApi>;
  return typeof api.defineMetadata === 'function' && typeof api.getOwnMetadata === 'function'
    ? (api as MetadataApi)
    : undefined;
}

export function recordMethodMetadata(key: string, options: TaskOptions | ToolOptions, at: DecoratedMethod): void {
  const api = metadataApi();
  if (!api) return;
  api.defineMetadata(key, options, at.method);
  if (at.legacy) api.defineMetadata(key, options, at.legacy.target, at.legacy.key);
}

export function recordQuestionMetadata(question: QuestionMetadata, at: DecoratedMethod): void {
  const api = metadataApi();
  if (!api) return;
  // Decorators apply from the method outwards, so the one written first comes last: prepend it.
  const add = (target: object, key?: string | symbol) => {
    const before = (api.getOwnMetadata(NEEDS_INPUT_METADATA_KEY, target, key) as QuestionMetadata[] | undefined) ?? [];
    api.defineMetadata(
      NEEDS_INPUT_METADATA_KEY,
      [question, ...before.filter((q) => q.name !== question.name)],
      target,
      key,
    );
  };
  add(at.method);
  if (at.legacy) add(at.legacy.target, at.legacy.key);
}
