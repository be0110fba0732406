/**
 * The interop path for metadata-driven frameworks: with `reflect-metadata` loaded and legacy
 * decorators (this folder's tsconfig.json), `@Task`, `@Tool` and `@NeedsInput` record their
 * options under documented keys, and a NestJS-style discovery (scan each provider's prototype,
 * read the method's metadata, as NestJS's MetadataScanner and Reflector do) finds the task tools.
 */
import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { getMethodMark } from '../../src/decorators/marks.js';
import {
  NEEDS_INPUT_METADATA_KEY,
  NeedsInput,
  type QuestionMetadata,
  TASK_METADATA_KEY,
  Task,
  type TaskContext,
  type TaskOptions,
  TOOL_METADATA_KEY,
  Tool,
} from '../../src/index.js';

/** A provider as a NestJS app would register it (`@Injectable()` left out: it only adds Nest's own metadata). */
class ReportsProvider {
  @Task({ title: 'Build a report', ttlMs: 60_000 })
  @NeedsInput<{ confirm: boolean }>('approval', { message: 'Publish it?' })
  @NeedsInput<{ format: string }>('format')
  async buildReport(quarter: string, ctx: TaskContext): Promise<{ url: string }> {
    ctx.progress(`building ${quarter}`);
    return { url: `https://reports.example/${quarter}` };
  }

  @Tool()
  async ping(): Promise<string> {
    return 'pong';
  }

  helper(): string {
    return 'not a tool';
  }
}

class AuditProvider {
  @Task()
  async exportLog(): Promise<void> {}
}

interface DiscoveredTask {
  provider: string;
  method: string;
  options: TaskOptions;
  questions: string[];
}

/** What a framework's discovery does with the metadata: every `@Task` method of every provider. */
function discoverTaskMethods(providers: readonly object[]): DiscoveredTask[] {
  return providers.flatMap((provider) => {
    const prototype = Object.getPrototypeOf(provider) as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype).flatMap((method) => {
      const options = Reflect.getMetadata(TASK_METADATA_KEY, prototype[method] as object) as TaskOptions | undefined;
      if (!options) return [];
      const questions = (Reflect.getMetadata(NEEDS_INPUT_METADATA_KEY, prototype[method] as object) ??
        []) as QuestionMetadata[];
      return [{ provider: provider.constructor.name, method, options, questions: questions.map((q) => q.name) }];
    });
  });
}

describe('reflect-metadata interop under legacy decorators', () => {
  it('lets a NestJS-style discovery find the task methods of every provider', () => {
    expect(discoverTaskMethods([new ReportsProvider(), new AuditProvider()])).toEqual([
      {
        provider: 'ReportsProvider',
        method: 'buildReport',
        options: { title: 'Build a report', ttlMs: 60_000 },
        questions: ['approval', 'format'],
      },
      { provider: 'AuditProvider', method: 'exportLog', options: {}, questions: [] },
    ]);
  });

  it('records the options on the prototype and key too, as InversifyJS-style readers expect', () => {
    const prototype = ReportsProvider.prototype;
    expect(Reflect.getMetadata(TASK_METADATA_KEY, prototype, 'buildReport')).toEqual({
      title: 'Build a report',
      ttlMs: 60_000,
    });
    expect(Reflect.getMetadata(NEEDS_INPUT_METADATA_KEY, prototype, 'buildReport')).toEqual([
      { name: 'approval', message: 'Publish it?' },
      { name: 'format' },
    ]);
    expect(Reflect.getMetadata(TOOL_METADATA_KEY, prototype, 'ping')).toEqual({});
  });

  it('marks tools apart from tasks, and leaves undecorated methods alone', () => {
    const prototype = ReportsProvider.prototype;
    expect(Reflect.getMetadata(TASK_METADATA_KEY, prototype.ping)).toBeUndefined();
    expect(Reflect.getMetadata(TOOL_METADATA_KEY, prototype.ping)).toEqual({});
    expect(Reflect.getMetadataKeys(prototype.helper)).toEqual([]);
  });

  it('records on the method function alone under standard decorators', async () => {
    // This file is compiled with legacy decorators; call one the way TC39 decorators do.
    class Standard {
      async run(): Promise<void> {}
    }
    const context = { kind: 'method', name: 'run', static: false, private: false } as ClassMethodDecoratorContext;
    Task({ ttlMs: 5 })(Standard.prototype.run, context);
    expect(Reflect.getMetadata(TASK_METADATA_KEY, Standard.prototype.run)).toEqual({ ttlMs: 5 });
    expect(Reflect.getMetadata(TASK_METADATA_KEY, Standard.prototype, 'run')).toBeUndefined();
  });

  it('keeps the mark the generated glue checks, with or without metadata', () => {
    expect(getMethodMark(ReportsProvider.prototype.buildReport)).toEqual({
      kind: 'task',
      options: { title: 'Build a report', ttlMs: 60_000 },
    });
  });
});
