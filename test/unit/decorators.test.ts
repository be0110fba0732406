import { describe, expect, it } from 'vitest';
import { getMethodMark, getQuestionMarks } from '../../src/decorators/marks.js';
import { NeedsInput, Task, Tool } from '../../src/index.js';

class Sample {
  @Task({ ttlMs: 5000 })
  @NeedsInput<{ ok: boolean }>('approval', { message: 'Go?' })
  async run(): Promise<void> {}

  @Tool()
  ping(): string {
    return 'pong';
  }

  plain(): void {}
}

describe('decorators (TC39 mode, as compiled by the test runner)', () => {
  it('marks methods without instantiating the class', () => {
    expect(getMethodMark(Sample.prototype.run)).toEqual({ kind: 'task', options: { ttlMs: 5000 } });
    expect(getMethodMark(Sample.prototype.ping)).toEqual({ kind: 'tool', options: {} });
    expect(getMethodMark(Sample.prototype.plain)).toBeUndefined();
    expect([...getQuestionMarks(Sample.prototype.run)]).toEqual([['approval', { message: 'Go?' }]]);
  });

  it('needs no reflect-metadata: without it they record marks only', () => {
    // This file never loads reflect-metadata (test/interop covers the app that does).
    expect('getMetadata' in Reflect).toBe(false);
    expect(getMethodMark(Sample.prototype.ping)).toEqual({ kind: 'tool', options: {} });
  });

  it('leaves the method callable and unchanged', async () => {
    expect(new Sample().ping()).toBe('pong');
    await expect(new Sample().run()).resolves.toBeUndefined();
  });

  it('refuses a static method with a message naming the rule', () => {
    expect(() => {
      // biome-ignore lint/complexity/noStaticOnlyClass: a static method is exactly what is being refused.
      class Bad {
        @Task()
        static async run() {}
      }
      return Bad;
    }).toThrow(/instance methods, not to a static method/);
  });
});
