/**
 * What the contract suite cannot see: work in other Node processes. A worker process cancelled
 * from here, its record changes reaching listeners here, a graceful SIGTERM, and jobs of
 * SIGKILLed workers recovered by others until the task fails as "worker lost".
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { expect, it, vi } from 'vitest';
import type { TaskEvent, TaskExecutor } from '../../src/engine/runtime.js';
import { BullmqTaskRuntime, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { sleep } from '../contract/runtime-contract.js';
import { useRedisScope } from '../support/redis-scope.js';
import { ChildWorker } from './child-worker.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, waitForRecord } from './support.js';

/** Short lock and stall timings, the same in every process (docs/design/bullmq.md §2). */
const FAST_STALLS = { LOCK_MS: 1000, STALLED_MS: 500 };

describeWithRedis('bullmq runtime across processes', () => {
  const scope = useRedisScope();

  function startChild(settings: Record<string, number> = {}): ChildWorker {
    const child = new ChildWorker(scope.prefix, settings);
    scope.onClose(() => child.stop());
    return child;
  }

  function startRuntime(): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    return runtime;
  }

  it('cancels a method running in another process, and relays every change of its record here', async () => {
    const child = startChild();
    const runtime = startRuntime();
    await child.ready();
    const events: TaskEvent[] = [];
    runtime.subscribe((event) => events.push(event));

    const task = await runtime.create(newRecord({ script: 'progress-then-wait', text: 'step 1 of 3' }));
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === 'step 1 of 3');
    const cancelledAt = Date.now();
    const cancelled = await runtime.cancel(task.taskId, 'cancelled by client');
    expect(cancelled?.status).toBe('cancelled');
    await child.waitFor((report) => report.event === 'aborted' && report.taskId === task.taskId);
    expect(Date.now() - cancelledAt).toBeLessThan(5000);

    // The method returned a result after the abort; terminal is sticky, so that result was dropped.
    await sleep(200);
    const after = await runtime.get(task.taskId);
    expect(after?.status).toBe('cancelled');
    expect(after?.outcome).toBeUndefined();
    const seen = events
      .filter((e) => e.record.taskId === task.taskId)
      .map((e) => [e.record.status, e.record.statusMessage]);
    // The method reported progress at once, so the runtime's "queued" note went straight to it.
    expect(seen).toEqual([
      ['working', 'queued'],
      ['working', 'step 1 of 3'],
      ['cancelled', 'cancelled by client'],
    ]);

    // A task finished by the other process wakes a waiter here.
    const quick = await runtime.create(newRecord({ script: 'finish', text: 'from afar' }));
    const done = await waitForRecord(runtime, quick.taskId, (record) => record.status === 'completed');
    expect(done.outcome).toEqual({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'from afar' }] },
      isError: false,
    });
  });

  it('on SIGTERM a worker process aborts its methods after the grace period and hands their jobs back', async () => {
    const child = startChild({ GRACE_MS: 300 });
    const runtime = startRuntime();
    await child.ready();
    const task = await runtime.create(newRecord({ script: 'progress-then-wait', text: 'busy' }));
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === 'busy');

    child.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    const requeued = await runtime.get(task.taskId);
    expect(requeued).toMatchObject({ status: 'working', statusMessage: 'queued again: its worker shut down' });

    // Another worker takes the job from the queue and finishes it.
    const executor: TaskExecutor = {
      execute: async () => ({ kind: 'result', result: { content: [] }, isError: false }),
    };
    const worker = new TaskWorker({ connection: REDIS_URL, prefix: scope.prefix, executor, logger: quietLogger });
    scope.onClose(() => worker.close());
    expect((await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed')).status).toBe(
      'completed',
    );
  });

  it('recovers the job of a SIGKILLed worker in another worker, and fails the task when that one is lost too', async () => {
    const first = startChild(FAST_STALLS);
    const second = startChild(FAST_STALLS);
    const runtime = startRuntime();
    await Promise.all([first.ready(), second.ready()]);
    const events: TaskEvent[] = [];
    runtime.subscribe((event) => events.push(event));

    const task = await runtime.create(newRecord({ script: 'hang' }));
    const startedIn = (child: ChildWorker) =>
      child.waitFor((report) => report.event === 'started' && report.taskId === task.taskId, 8000);
    const victim = await Promise.any([startedIn(first).then(() => first), startedIn(second).then(() => second)]);
    const rescuer = victim === first ? second : first;
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    await startedIn(rescuer);
    const rescuedAfter = Date.now() - killedAt;
    expect(rescuedAfter).toBeLessThan(5000);
    // The note is written by whichever worker found the stall, beside the rescuer's start, and
    // its event travels apart from the child's report: it may land just after it.
    await vi.waitFor(() =>
      expect(
        events.some((e) => e.record.taskId === task.taskId && e.record.statusMessage?.startsWith('queued again')),
      ).toBe(true),
    );

    // maxStalledCount 1: the second loss is final. A live worker (here, in this process) writes the failure.
    rescuer.kill('SIGKILL');
    const executor: TaskExecutor = {
      execute: async () => {
        throw new Error('a job that stalled too often must not run again');
      },
    };
    const worker = new TaskWorker({
      connection: REDIS_URL,
      prefix: scope.prefix,
      executor,
      lockDurationMs: FAST_STALLS.LOCK_MS,
      stalledIntervalMs: FAST_STALLS.STALLED_MS,
      logger: quietLogger,
    });
    scope.onClose(() => worker.close());
    const failed = await waitForRecord(runtime, task.taskId, (record) => record.status === 'failed', 8000);
    expect(failed.statusMessage).toMatch(/worker running this task was lost/);
    expect(failed.outcome).toMatchObject({ kind: 'error', error: { code: -32603 } });
  });

  it('with the default timings, a SIGKILLed worker’s job runs again within 15 s, and meanwhile the task says its worker was lost', async () => {
    const first = startChild();
    const second = startChild();
    const runtime = startRuntime();
    await Promise.all([first.ready(), second.ready()]);
    const task = await runtime.create(newRecord({ script: 'progress-then-wait', text: 'halfway' }));
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === 'halfway');
    const startedIn = (child: ChildWorker) =>
      child.waitFor((report) => report.event === 'started' && report.taskId === task.taskId, 20_000);
    const victim = first.reports.some((r) => r.event === 'started' && r.taskId === task.taskId) ? first : second;
    const rescuer = victim === first ? second : first;
    const killedAt = Date.now();
    victim.kill('SIGKILL');

    // Once the dead worker's lock lapses, a read no longer shows its last progress as current.
    let lost: string | undefined;
    while (lost === undefined && Date.now() - killedAt < 15_000) {
      const read = await runtime.get(task.taskId);
      if (read?.statusMessage === 'worker lost; retrying') lost = read.statusMessage;
      else await sleep(200);
    }
    expect(lost).toBe('worker lost; retrying');
    await startedIn(rescuer);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    rescuer.kill('SIGKILL');
  }, 40_000);
  it('loses nothing when the worker is SIGKILLed during a retry back-off: another worker runs the next attempt once, after the step', async () => {
    const first = startChild({ RETRY_DELAY_MS: 1500 });
    const runtime = startRuntime();
    await first.ready();
    const task = await runtime.create(newRecord({ script: 'fail-once' }));
    await first.waitFor((report) => report.event === 'started' && report.taskId === task.taskId);
    const waiting = await waitForRecord(
      runtime,
      task.taskId,
      (record) => record.statusMessage?.startsWith('attempt 2') ?? false,
    );
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).toBe('attempt 2 of 3 in 1.5 s: ECONNRESET');
    // The back-off holds no job in that worker (it waits in the delayed set): killing it loses nothing.
    const redis = new Redis(REDIS_URL);
    scope.onClose(async () => redis.disconnect());
    const queue = new Queue(runtime.names.shards[0]?.queue as string, {
      connection: redis,
      prefix: runtime.names.prefix,
    });
    scope.onClose(() => queue.close());
    await vi.waitFor(async () => expect(await queue.getJobState(task.taskId)).toBe('delayed'), { timeout: 5000 });
    first.kill('SIGKILL');
    await first.exited;
    expect((await runtime.get(task.taskId))?.status).toBe('working');
    const second = startChild();
    await second.ready();
    const done = await waitForRecord(runtime, task.taskId, (record) => record.status !== 'working', 15_000);
    expect(done.status).toBe('completed');
    expect(done.outcome).toMatchObject({ result: { content: [{ type: 'text', text: 'attempt 2, effect 1' }] } });
    const rerun = await second.waitFor((report) => report.event === 'started' && report.taskId === task.taskId);
    expect(rerun.attempt).toBe(2);
    // The step ran once over both attempts and both processes.
    expect(await redis.get(`${scope.prefix}:effects:${task.taskId}`)).toBe('1');
  }, 40_000);
});
