/**
 * Worker behaviour on a real queue: per-tool concurrency, BullMQ retries surfacing as
 * `retrying in …` messages, and progress writes that never go back in time.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ExecutionControl, TaskEvent, TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime, type TaskWorkerSettings } from '../../src/runtime/bullmq/index.js';
import { waitUntil } from '../contract/runtime-contract.js';
import {
  deleteKeysUnder,
  describeWithRedis,
  newRecord,
  quietLogger,
  REDIS_URL,
  randomPrefix,
  waitForRecord,
} from './support.js';

const DONE: TaskOutcome = { kind: 'result', result: { content: [] }, isError: false };

describeWithRedis('bullmq task worker', () => {
  let prefix: string;
  let runtime: BullmqTaskRuntime | undefined;

  beforeEach(() => {
    prefix = randomPrefix();
  });

  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
    await deleteKeysUnder(prefix);
  });

  async function start(worker: TaskWorkerSettings, backoffMs = 1000): Promise<BullmqTaskRuntime> {
    runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix,
      logger: quietLogger,
      retry: { attempts: 3, backoffMs },
      worker: { shutdownGraceMs: 200, logger: quietLogger, ...worker },
    });
    await runtime.worker?.started;
    return runtime;
  }

  it("honours a tool's own concurrency limit below the worker's", async () => {
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const releases: (() => void)[] = [];
    const executor: TaskExecutor = {
      concurrencyOf: (tool) => (tool === 'single' ? 1 : undefined),
      async execute(record: TaskRecord) {
        active.set(record.tool, (active.get(record.tool) ?? 0) + 1);
        peak.set(record.tool, Math.max(peak.get(record.tool) ?? 0, active.get(record.tool) ?? 0));
        await new Promise<void>((resolve) => releases.push(resolve));
        active.set(record.tool, (active.get(record.tool) ?? 1) - 1);
        return DONE;
      },
    };
    const rt = await start({ executor, concurrency: 4 });
    const tasks = [
      ...(await Promise.all([1, 2, 3].map(() => rt.create(newRecord({}, { tool: 'single' }))))),
      await rt.create(newRecord({}, { tool: 'free' })),
    ];
    // The free tool runs beside one 'single'; the other two wait for that tool's slot.
    await waitUntil(() => releases.length === 2);
    for (let released = 0; released < tasks.length; released++) {
      await waitUntil(() => releases.length > 0);
      releases.shift()?.();
    }
    for (const task of tasks) await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    expect(peak.get('single')).toBe(1);
    expect(peak.get('free')).toBe(1);
  });

  it('shows a failed attempt as "retrying in … (attempt n of m)" and runs the job again', async () => {
    let calls = 0;
    const executor: TaskExecutor = {
      // A broken executor throwing outside `execute` fails the attempt itself, not the method.
      concurrencyOf: () => {
        calls++;
        if (calls === 1) throw new Error('executor not ready');
        return undefined;
      },
      execute: async () => DONE,
    };
    const rt = await start({ executor }, 300);
    const events: TaskEvent[] = [];
    rt.subscribe((event) => events.push(event));
    const task = await rt.create(newRecord({}));
    const done = await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    expect(done.outcome).toEqual(DONE);
    const messages = events.filter((e) => e.record.taskId === task.taskId).map((e) => e.record.statusMessage);
    expect(messages).toContain('retrying in 300ms (attempt 2 of 3)');
  });

  it('stores progress in report order: a burst is coalesced, and the last message wins', async () => {
    let release: (() => void) | undefined;
    const executor: TaskExecutor = {
      async execute(_record: TaskRecord, control: ExecutionControl) {
        for (let step = 1; step <= 50; step++) control.report({ message: `step ${step}` });
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return DONE;
      },
    };
    const rt = await start({ executor });
    const events: TaskEvent[] = [];
    rt.subscribe((event) => events.push(event));
    const task = await rt.create(newRecord({}));
    await waitForRecord(rt, task.taskId, (record) => record.statusMessage === 'step 50');
    release?.();
    await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    const steps = events
      .filter((e) => e.record.taskId === task.taskId && e.record.statusMessage?.startsWith('step '))
      .map((e) => Number(e.record.statusMessage?.slice(5)));
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(steps.length).toBeLessThan(50);
  });
});
