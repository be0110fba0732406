/**
 * `ctx.sleep` on the BullMQ runtime: a sleeping task is a delayed job holding no worker slot,
 * a thousand of them sleep on one slot and wake on time, a sleep outlives the SIGKILL of its
 * worker and a restart of the server side, and a cancel removes the parked job.
 */
import { expect, it } from 'vitest';
import { type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { ExecutionControl, TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { useRedisScope } from '../support/redis-scope.js';
import { ChildWorker } from './child-worker.js';
import { describeWithRedis, quietLogger, REDIS_URL, withRedis } from './support.js';

const ALICE: Caller = { principal: 'alice' };
const BOB: Caller = { principal: 'bob' };
const CHILD_SETTINGS = { CONCURRENCY: 2, INPUT_GRACE_MS: 200, LOCK_MS: 1000, STALLED_MS: 500 };

/** Sleeps until `args.wakeAt` (or `args.ms`); counts runs and steps; `finish` just completes. */
class SleepingExecutor implements TaskExecutor {
  runs = 0;
  steps = 0;
  readonly events: LifecycleEvent[] = [];
  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    this.runs++;
    const { script, wakeAt, ms } = record.args as { script: string; wakeAt?: number; ms?: number };
    if (script === 'sleep') {
      await control.step('prepare', async () => ++this.steps);
      // The duration is computed on the first run only: the record keeps the wake time after.
      const duration = await control.step('duration', async () => ms ?? Math.max(0, (wakeAt ?? 0) - Date.now()));
      await control.sleep?.('sleep', duration);
    }
    return { kind: 'result', result: { content: [{ type: 'text', text: 'done' }] }, isError: false };
  }
  observe(event: LifecycleEvent): void {
    this.events.push(event);
  }
}

describeWithRedis('sleeps on the BullMQ runtime', () => {
  const scope = useRedisScope();

  function start(executor: TaskExecutor, concurrency = 1): { runtime: BullmqTaskRuntime; engine: TaskEngine } {
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      logger: quietLogger,
      worker: { executor, concurrency, inputGraceMs: 200, shutdownGraceMs: 200, logger: quietLogger },
    });
    scope.onClose(() => runtime.close());
    return { runtime, engine: new TaskEngine({ runtime }) };
  }

  it('keeps 1,000 tasks asleep on one worker slot, runs another task meanwhile, and wakes each within a second of its time', async () => {
    const executor = new SleepingExecutor();
    const { runtime, engine } = start(executor, 1);
    await runtime.worker?.started;
    const count = 1000;
    // Wake times spread over 8 s, after every task has had time to fall asleep.
    const firstWake = Date.now() + 12_000;
    const ids: string[] = [];
    for (let batch = 0; batch < count / 100; batch++) {
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          engine.create(ALICE, { tool: 't', args: { script: 'sleep', wakeAt: firstWake + (batch * 100 + i) * 8 } }),
        ),
      );
      ids.push(...created.map((task) => task.taskId));
    }
    const asleep = await Promise.all(
      ids.map((id) =>
        engine.waitFor(
          ALICE,
          id,
          (r) => r.statusMessage?.startsWith('sleeping until') ?? false,
          AbortSignal.timeout(20_000),
        ),
      ),
    );
    // The note is written before the job parks, and the parked set after: count once all parked.
    let parked = (await runtime.stats()).parked?.sleep;
    while (parked !== count && Date.now() < firstWake) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      parked = (await runtime.stats()).parked?.sleep;
    }
    expect(Date.now()).toBeLessThan(firstWake);
    expect(parked).toBe(count);
    // The one slot is free: another task runs to its end while all of them sleep.
    const other = await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
    expect((await engine.waitForTerminal(BOB, other.taskId)).status).toBe('completed');
    expect(Date.now()).toBeLessThan(firstWake);

    const done = await Promise.all(ids.map((id) => engine.waitForTerminal(ALICE, id, AbortSignal.timeout(30_000))));
    const late = done.map((record, index) => {
      const until = asleep[index]?.sleeps?.sleep as number;
      expect(record.status).toBe('completed');
      expect(record.lastUpdatedAt).toBeGreaterThanOrEqual(until);
      return record.lastUpdatedAt - until;
    });
    const worst = Math.max(...late);
    console.log(
      `1,000 sleepers on one slot: woke late by median ${late.sort((a, b) => a - b)[500]} ms, worst ${worst} ms`,
    );
    expect(worst).toBeLessThan(1000);
    // Each ran twice (fell asleep, woke) and did its step once; the gauge is back to zero.
    expect(executor.steps).toBe(count);
    expect(executor.runs).toBe(2 * count + 1);
    expect((await runtime.stats()).parked).toMatchObject({ sleep: 0 });
    const woke = executor.events.filter((event) => event.type === 'woke');
    expect(woke).toHaveLength(count);
  }, 60_000);

  it('sleeps through a SIGKILL of its worker and a restart of the server: the side effect and the end happen once', async () => {
    let server = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    let engine = new TaskEngine({ runtime: server });
    const first = new ChildWorker(scope.prefix, CHILD_SETTINGS);
    scope.onClose(() => first.stop());
    await first.ready();
    const ids = (
      await Promise.all(
        Array.from({ length: 10 }, () =>
          engine.create(ALICE, { tool: 't', args: { script: 'sleep-with-effect', ms: 4000 } }),
        ),
      )
    ).map((task) => task.taskId);
    const asleep = await Promise.all(
      ids.map((id) =>
        engine.waitFor(ALICE, id, (r) => r.statusMessage?.startsWith('sleeping') ?? false, AbortSignal.timeout(15_000)),
      ),
    );
    await first.waitFor((report) => report.event === 'parked' && report.taskId === ids.at(-1));
    first.kill('SIGKILL');
    await first.exited;
    // The server side goes too, and a new one comes up: nothing of the sleep lived in either.
    await server.close();
    server = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => server.close());
    engine = new TaskEngine({ runtime: server });
    expect((await engine.get(ALICE, ids[0] as string)).status).toBe('working');
    const second = new ChildWorker(scope.prefix, CHILD_SETTINGS);
    scope.onClose(() => second.stop());
    await second.ready();
    const done = await Promise.all(ids.map((id) => engine.waitForTerminal(ALICE, id, AbortSignal.timeout(30_000))));
    for (const [index, record] of done.entries()) {
      expect(record.status).toBe('completed');
      expect(record.lastUpdatedAt).toBeGreaterThanOrEqual(asleep[index]?.sleeps?.sleep as number);
    }
    const counts = await withRedis(async (client) => ({
      effects: await client.mget(...ids.map((id) => `${scope.prefix}:effects:${id}`)),
      completions: await client.mget(...ids.map((id) => `${scope.prefix}:completions:${id}`)),
    }));
    expect(counts.effects).toEqual(ids.map(() => '1'));
    expect(counts.completions).toEqual(ids.map(() => '1'));
    expect(second.reports.filter((report) => report.event === 'woke')).toHaveLength(ids.length);
  }, 90_000);

  it('cancels a sleeping task by removing its parked job; another principal can neither see nor cancel it', async () => {
    const executor = new SleepingExecutor();
    const { runtime, engine } = start(executor);
    await runtime.worker?.started;
    const created = await engine.create(ALICE, { tool: 't', args: { script: 'sleep', ms: 1500 } });
    await engine.waitFor(ALICE, created.taskId, (r) => r.statusMessage?.startsWith('sleeping') ?? false);
    await waitForDelayedJob(created.taskId);
    await expect(engine.get(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    await expect(engine.cancel(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect((await engine.list(BOB)).tasks).toEqual([]);
    expect((await runtime.stats()).parked).toMatchObject({ sleep: 1 });
    expect((await engine.cancel(ALICE, created.taskId)).status).toBe('cancelled');
    // The job is gone at once, and with it the count; nothing runs at the wake time.
    expect(await jobExists(created.taskId)).toBe(false);
    expect((await runtime.stats()).parked).toMatchObject({ sleep: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(executor.runs).toBe(1);
    expect((await engine.get(ALICE, created.taskId)).status).toBe('cancelled');
    expect(executor.events.map((event) => event.type)).toEqual(['parked']);
  }, 30_000);

  it('waits out a sleep shorter than the input grace in place, saying so, without parking', async () => {
    const executor = new SleepingExecutor();
    const { runtime, engine } = start(executor);
    await runtime.worker?.started;
    const created = await engine.create(ALICE, { tool: 't', args: { script: 'sleep', ms: 150 } });
    const done = await engine.waitForTerminal(ALICE, created.taskId);
    expect(done.status).toBe('completed');
    expect(done.lastUpdatedAt).toBeGreaterThanOrEqual(done.sleeps?.sleep as number);
    expect(executor.runs).toBe(1);
    expect(executor.events.map((event) => event.type)).toEqual(['parked', 'woke']);
  });

  async function jobExists(taskId: string): Promise<boolean> {
    return withRedis(async (client) => (await client.exists(`${scope.prefix}:{tasks}:${taskId}`)) === 1);
  }

  async function waitForDelayedJob(taskId: string): Promise<void> {
    for (let tries = 0; tries < 100; tries++) {
      const delayed = await withRedis((client) => client.zscore(`${scope.prefix}:{tasks}:delayed`, taskId));
      if (delayed !== null) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`the job of ${taskId} never became delayed`);
  }
});
