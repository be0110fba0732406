/**
 * A small app whose parent task fans out to child tasks (`ctx.spawn`), for the child-task
 * tests on both runtimes and across worker processes. The manifest is written by hand, as
 * `mcp-taskgen` would write it, with its `TaskTools` map, so `ctx.spawn` is typed here too.
 */
import { z } from 'zod';
import { ChildTaskFailedError, isTaskPaused, Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';

export interface PartInput {
  index: number;
  /** Throw instead of answering. */
  fail?: boolean;
  /** Hold for this long first (aborts end it). */
  holdMs?: number;
}

export interface PartOutput {
  index: number;
  doubled: number;
  pid: number;
}

export interface FanInput {
  parts: number;
  /** The part that fails, if any. */
  failAt?: number;
  holdMs?: number;
  /** Catch a failed child and report it rather than fail. */
  catchFailure?: boolean;
  /** Wait for each child's `result()` in turn rather than `ctx.all`. */
  oneByOne?: boolean;
  /** After spawning, hold the parent's run this long before waiting (a window to kill it in). */
  holdParentMs?: number;
  /** Spawn a part with an argument of the wrong type. */
  badArgs?: boolean;
}

export interface FanOutput {
  sum: number;
  pids: number[];
  failure?: string;
}

/** The app's tools by name, as the generated module's `TaskTools` gives them. */
export interface TestTools {
  part: { readonly input: PartInput; readonly output: PartOutput };
  fan: { readonly input: FanInput; readonly output: FanOutput };
}

/** Counts the parent's runs (replays) per task, in this process. */
export const fanRuns = new Map<string, number>();

export class Fanner {
  @Task()
  async part(input: PartInput, ctx: TaskContext<{}, TestTools>): Promise<PartOutput> {
    if (input.holdMs) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, input.holdMs);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    ctx.signal.throwIfAborted();
    if (input.fail) throw new Error(`part ${input.index} broke`);
    return { index: input.index, doubled: input.index * 2, pid: process.pid };
  }

  @Task()
  async fan(input: FanInput, ctx: TaskContext<{}, TestTools>): Promise<FanOutput> {
    fanRuns.set(ctx.taskId as string, (fanRuns.get(ctx.taskId as string) ?? 0) + 1);
    if (input.badArgs) await ctx.spawn('part', { index: 'one' as unknown as number });
    const children = [];
    for (let index = 0; index < input.parts; index++) {
      children.push(
        await ctx.spawn('part', {
          index,
          ...(index === input.failAt && { fail: true }),
          ...(input.holdMs !== undefined && { holdMs: input.holdMs }),
        }),
      );
    }
    if (input.holdParentMs) await new Promise((resolve) => setTimeout(resolve, input.holdParentMs));
    try {
      const results = input.oneByOne
        ? await (async () => {
            const each: PartOutput[] = [];
            for (const child of children) each.push(await child.result());
            return each;
          })()
        : await ctx.all(children);
      return { sum: results.reduce((sum, part) => sum + part.doubled, 0), pids: results.map((part) => part.pid) };
    } catch (error) {
      if (isTaskPaused(error) || !input.catchFailure || !(error instanceof ChildTaskFailedError)) throw error;
      return { sum: -1, pids: [], failure: error.message };
    }
  }
}

const PartInputSchema = z.object({
  index: z.int(),
  fail: z.boolean().optional(),
  holdMs: z.int().min(0).optional(),
});
const PartOutputSchema = z.object({ index: z.int(), doubled: z.int(), pid: z.int() });
const FanInputSchema = z.object({
  parts: z.int().min(0),
  failAt: z.int().optional(),
  holdMs: z.int().min(0).optional(),
  catchFailure: z.boolean().optional(),
  oneByOne: z.boolean().optional(),
  holdParentMs: z.int().min(0).optional(),
  badArgs: z.boolean().optional(),
});
const FanOutputSchema = z.object({ sum: z.int(), pids: z.array(z.int()), failure: z.string().optional() });

export const childrenManifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<Fanner, z.output<typeof PartInputSchema>>({
      name: 'part',
      taskSupport: 'optional',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
      input: PartInputSchema,
      output: PartOutputSchema,
      result: 'structured',
      target: { class: Fanner, method: 'part' },
      source: 'test/children/children-app.ts:52:3',
      invoke: (target, args, ctx) => target.part(args, ctx as never),
    }),
    defineTaskTool<Fanner, z.output<typeof FanInputSchema>>({
      name: 'fan',
      taskSupport: 'optional',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
      input: FanInputSchema,
      output: FanOutputSchema,
      result: 'structured',
      target: { class: Fanner, method: 'fan' },
      source: 'test/children/children-app.ts:68:3',
      invoke: (target, args, ctx) => target.fan(args, ctx as never),
    }),
  ],
});
