/**
 * A job that left its worker (parked, or waiting for its fair share) can be promoted (an answer,
 * a callback, a released slot, the run's own look after moving it) and taken again by the same
 * BullMQ worker before the run that moved it has unwound. That run's end must not take the new
 * run's lock renewal or its cancel with it: BullMQ and the worker both track runs by job id,
 * which the two runs share.
 */
import type { Job } from 'bullmq';
import { expect, it } from 'vitest';
import { type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { ExecutionControl, TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { bullmqLibrary } from '../../src/runtime/bullmq/libraries.js';
import { type RedisScope, useRedisScope } from '../support/redis-scope.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, withRedis } from './support.js';

const ALICE: Caller = { principal: 'alice' };
const LOCK_MS = 1000;
const done: TaskOutcome = { kind: 'result', result: { content: [] }, isError: false };

/** Whether `signal` aborts (or has) within `ms`: a bound for a cancel on its way, not a speed. */
function abortedWithin(signal: AbortSignal | undefined, ms: number): Promise<boolean> {
  if (!signal || signal.aborted) return Promise.resolve(signal?.aborted ?? false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

/**
 * Runs `then` on the job right after the first move to delayed any worker's job makes (the
 * move itself done, the run that made it not yet on), until `scope` closes. Patched on the class
 * the worker's jobs are made of (the runtime loads bullmq with `require`).
 */
function afterFirstMoveToDelayed(scope: RedisScope, then: (job: Job) => Promise<void>): void {
  const { Job: JobClass } = bullmqLibrary();
  const moveToDelayed = JobClass.prototype.moveToDelayed;
  let injected = false;
  JobClass.prototype.moveToDelayed = async function (this: Job, ...args: Parameters<Job['moveToDelayed']>) {
    await moveToDelayed.apply(this, args);
    if (injected) return;
    injected = true;
    await then(this);
  };
  scope.onClose(async () => {
    JobClass.prototype.moveToDelayed = moveToDelayed;
  });
}

/** Asks on its first run (which parks); its second run holds on until it is cancelled. */
class ParkThenHoldExecutor implements TaskExecutor {
  runs = 0;
  secondSignal: AbortSignal | undefined;
  private began: (() => void) | undefined;
  readonly secondBegan = new Promise<void>((resolve) => {
    this.began = resolve;
  });

  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    this.runs++;
    if (this.runs === 1) {
      await control.ask('approve', {
        question: 'approve',
        params: {
          mode: 'form',
          message: `Approve ${record.taskId}?`,
          requestedSchema: { type: 'object', properties: {} },
        },
      });
      return done;
    }
    this.secondSignal = control.signal;
    this.began?.();
    await new Promise((resolve) => control.signal.addEventListener('abort', resolve, { once: true }));
    return done;
  }
}

/** Holds its first task until told; the next run it gets holds on until it is cancelled. */
class HoldExecutor implements TaskExecutor {
  runs = 0;
  secondSignal: AbortSignal | undefined;
  releaseFirst: () => void = () => {};
  private began: (() => void) | undefined;
  readonly secondBegan = new Promise<void>((resolve) => {
    this.began = resolve;
  });

  async execute(_record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    this.runs++;
    if (this.runs === 1) {
      await new Promise<void>((resolve) => {
        this.releaseFirst = resolve;
      });
      return done;
    }
    this.secondSignal = control.signal;
    this.began?.();
    await new Promise((resolve) => control.signal.addEventListener('abort', resolve, { once: true }));
    return done;
  }
}

describeWithRedis('a parked job taken again while its parking run unwinds', () => {
  const scope = useRedisScope();

  it('keeps the new run locked and cancellable after the old run has ended', async () => {
    const executor = new ParkThenHoldExecutor();
    // The interleaving: the first park's move to delayed is followed at once by a promote, and
    // the parking run goes on (and ends) only once the second run of the job has begun.
    afterFirstMoveToDelayed(scope, async (job) => {
      await job.promote();
      await executor.secondBegan;
    });
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      logger: quietLogger,
      worker: {
        executor,
        concurrency: 2,
        inputGraceMs: 10,
        lockDurationMs: LOCK_MS,
        stalledIntervalMs: LOCK_MS / 2,
        shutdownGraceMs: 100,
        logger: quietLogger,
      },
    });
    scope.onClose(() => runtime.close());
    await runtime.worker?.started;
    const engine = new TaskEngine({ runtime });
    const { taskId } = await engine.create(ALICE, { tool: 't', args: {} });
    await executor.secondBegan;

    // Long past the lock's duration: only a renewed lock keeps the job from stalling and
    // running a third time.
    await new Promise((resolve) => setTimeout(resolve, 4 * LOCK_MS));
    const names = runtime.worker?.names;
    const lock = await withRedis((client) => client.get(names?.jobLock(taskId) ?? ''));
    expect(lock).not.toBeNull();
    expect(executor.runs).toBe(2);

    // The cancel reaches the run that holds the job now.
    await engine.cancel(ALICE, taskId);
    expect(await abortedWithin(executor.secondSignal, 10_000)).toBe(true);
  });

  it('keeps cancelling the new run of a job that left to wait for its fair share', async () => {
    const executor = new HoldExecutor();
    // The second task finds its owner's one slot taken and leaves to wait; right after its move
    // to delayed, it is promoted, the slot frees up, and its wait ends only once it runs again.
    afterFirstMoveToDelayed(scope, async (job) => {
      await job.promote();
      executor.releaseFirst();
      await executor.secondBegan;
    });
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      logger: quietLogger,
      worker: { executor, concurrency: 3, shutdownGraceMs: 100, logger: quietLogger },
    });
    scope.onClose(() => runtime.close());
    await runtime.worker?.started;
    await runtime.create(newRecord({}), { maxRunningForOwner: 1 });
    const second = await runtime.create(newRecord({}), { maxRunningForOwner: 1 });
    await executor.secondBegan;

    await runtime.cancel(second.taskId, 'cancelled by the test');
    expect(await abortedWithin(executor.secondSignal, 10_000)).toBe(true);
  });
});
