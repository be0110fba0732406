/**
 * The live-task quota of a sharded app, on one Redis (the keys of three shards side by side;
 * the cluster suite shows the same with a master lost): each owner's live tasks are counted on
 * its home shard whatever shard a task is on, a burst of creates cannot overshoot, every way a
 * task ends gives its place back, and places a crash left behind are reconciled away.
 */
import { afterEach, expect, it } from 'vitest';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { RedisTaskStore } from '../../src/runtime/bullmq/record-store.js';
import {
  deleteKeysUnder,
  describeWithRedis,
  newRecord,
  quietLogger,
  REDIS_URL,
  randomPrefix,
  waitForRecord,
  withRedis,
} from './support.js';

const SHARDS = 3;

/** Runs each task as its arguments say: finish, fail (an error outcome), or wait until released. */
class ScriptExecutor implements TaskExecutor {
  private readonly waiting = new Map<string, () => void>();
  async execute(record: TaskRecord, control: { signal: AbortSignal }) {
    const script = (record.args as { script?: string }).script;
    if (script === 'fail') {
      return { kind: 'error' as const, error: { code: -32603, message: 'broke' } };
    }
    if (script === 'wait') {
      await new Promise<void>((resolve) => {
        this.waiting.set(record.taskId, resolve);
        control.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    return { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };
  }
  release(taskId: string): boolean {
    const release = this.waiting.get(taskId);
    release?.();
    return release !== undefined;
  }
}

describeWithRedis('live-task quota across shards', () => {
  let prefix = '';
  let runtimes: BullmqTaskRuntime[] = [];

  afterEach(async () => {
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    runtimes = [];
    await deleteKeysUnder(prefix);
  });

  function start(executor?: TaskExecutor): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix,
      shards: SHARDS,
      logger: quietLogger,
      ...(executor && { worker: { executor, concurrency: 8, shutdownGraceMs: 100, logger: quietLogger } }),
    });
    runtimes.push(runtime);
    return runtime;
  }

  /** A record of `owner` whose id falls on a shard other than the owner's home (or on `shard`). */
  function recordFor(runtime: BullmqTaskRuntime, owner: string, args: unknown = {}, shard?: number): NewTaskRecord {
    const home = runtime.names.homeOf(owner).index;
    for (;;) {
      const record = newRecord(args, { owner });
      const index = runtime.names.shardOf(record.taskId).index;
      if (shard === undefined ? index !== home : index === shard) return record;
    }
  }

  async function liveOnHome(runtime: BullmqTaskRuntime, owner: string): Promise<string[]> {
    return withRedis((client) => client.zrange(runtime.names.homeOf(owner).live(owner), '0', '-1'));
  }

  it('counts every shard on the home shard: a burst of creates from two servers makes exactly the quota', async () => {
    prefix = randomPrefix();
    const [one, two] = [start(), start()] as [BullmqTaskRuntime, BullmqTaskRuntime];
    const limit = 5;
    const attempts = Array.from({ length: 24 }, (_, index) => {
      const runtime = index % 2 === 0 ? one : two;
      return runtime.create(newRecord({}, { owner: 'carol' }), { maxLiveForOwner: limit });
    });
    const results = await Promise.allSettled(attempts);
    const made = results.filter((result) => result.status === 'fulfilled') as PromiseFulfilledResult<TaskRecord>[];
    // Creates in flight at once may overshoot by themselves at most; the home script takes the
    // places one at a time, so here they do not overshoot at all.
    expect(made.length).toBe(limit);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    }
    // The tasks are spread over the shards, their places all on carol's home.
    const shards = new Set(made.map((result) => one.names.shardOf(result.value.taskId).index));
    expect(shards.size).toBeGreaterThan(1);
    expect((await liveOnHome(one, 'carol')).sort()).toEqual(made.map((result) => result.value.taskId).sort());
    // Another principal has its own quota.
    await expect(one.create(newRecord({}, { owner: 'dave' }), { maxLiveForOwner: limit })).resolves.toBeDefined();
  });

  it('gives the place back on every ending: completed, failed, cancelled, deleted, expired', async () => {
    prefix = randomPrefix();
    const executor = new ScriptExecutor();
    const runtime = start(executor);
    await runtime.worker?.started;
    const quota = { maxLiveForOwner: 1 };
    const owner = 'erin';
    const refusedNow = () =>
      expect(runtime.create(recordFor(runtime, owner), quota)).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });

    // Completed (a task on another shard than the home, then one on the home itself).
    for (const shard of [undefined, runtime.names.homeOf(owner).index]) {
      const task = await runtime.create(recordFor(runtime, owner, { script: 'wait' }, shard), quota);
      await refusedNow();
      await expect.poll(() => executor.release(task.taskId)).toBe(true);
      await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');
      expect(await liveOnHome(runtime, owner)).toEqual([]);
    }
    // Failed.
    const failing = await runtime.create(recordFor(runtime, owner, { script: 'fail' }), quota);
    await waitForRecord(runtime, failing.taskId, (record) => record.status === 'failed');
    expect(await liveOnHome(runtime, owner)).toEqual([]);
    // Cancelled.
    const cancelled = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    await runtime.cancel(cancelled.taskId, 'cancelled by client');
    expect(await liveOnHome(runtime, owner)).toEqual([]);
    // Deleted.
    const deleted = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    await runtime.remove(deleted.taskId);
    expect(await liveOnHome(runtime, owner)).toEqual([]);
    // Expired: Redis drops the record and says nothing; the place's score is its expiry.
    const expiring = await runtime.create({ ...recordFor(runtime, owner, { script: 'wait' }), ttlMs: 400 }, quota);
    await refusedNow();
    await new Promise((resolve) => setTimeout(resolve, expiring.createdAt + 450 - Date.now()));
    const after = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    expect(await liveOnHome(runtime, owner)).toEqual([after.taskId]);
    await runtime.cancel(after.taskId, 'done');
  });

  it('reconciles places a crash left behind: a create that died before its insert, a release that was lost', async () => {
    prefix = randomPrefix();
    const executor = new ScriptExecutor();
    const runtime = start(executor);
    await runtime.worker?.started;
    const owner = 'frank';
    const quota = { maxLiveForOwner: 2 };
    // A server that took its place and died before sending the insert (no record, no job).
    const crashed = recordFor(runtime, owner);
    const live = runtime.names.homeOf(owner).live(owner);
    await withRedis((client) =>
      new RedisTaskStore(client, runtime.names).roomFor({ ...crashed, statusMessage: 'queued' }, quota.maxLiveForOwner),
    );
    // Just taken, it is a create in flight as far as anyone can tell: it keeps its place.
    const blocker = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    await expect(runtime.create(recordFor(runtime, owner), quota)).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(await liveOnHome(runtime, owner)).toContain(crashed.taskId);
    await runtime.cancel(blocker.taskId, 'done');
    // Later than any create could take (the grace is 30 s), the place is one a crash left.
    await withRedis((client) => client.zadd(`${live}:taken`, String(Date.now() - 60_000), crashed.taskId));
    // A task that completed, whose release on the home shard was lost (a worker killed between
    // the two writes, or the home master away at that moment).
    const finished = await runtime.create(recordFor(runtime, owner), quota);
    await waitForRecord(runtime, finished.taskId, (record) => record.status === 'completed');
    await withRedis((client) => client.zadd(live, String(Date.now() + 60_000), finished.taskId));
    expect((await liveOnHome(runtime, owner)).sort()).toEqual([crashed.taskId, finished.taskId].sort());

    // At the quota by the count, not by the facts: the refusal reconciles, and the create goes through.
    const next = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    expect(await liveOnHome(runtime, owner)).toEqual([next.taskId]);
    // What is really live still counts after a reconcile.
    const second = await runtime.create(recordFor(runtime, owner, { script: 'wait' }), quota);
    await expect(runtime.create(recordFor(runtime, owner), quota)).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect((await liveOnHome(runtime, owner)).sort()).toEqual([next.taskId, second.taskId].sort());
    for (const task of [next, second]) await runtime.cancel(task.taskId, 'done');
  });

  it('gives the place back when the insert stores nothing (a duplicate id)', async () => {
    prefix = randomPrefix();
    const runtime = start();
    const owner = 'gina';
    const first = await runtime.create({ ...recordFor(runtime, owner), clientTaskId: 'mine' }, { maxLiveForOwner: 2 });
    await expect(
      runtime.create(
        { ...newRecord({}, { owner, taskId: first.taskId }), clientTaskId: 'mine' },
        { maxLiveForOwner: 2 },
      ),
    ).rejects.toMatchObject({ code: 'DUPLICATE_TASK' });
    expect(await liveOnHome(runtime, owner)).toEqual([first.taskId]);
  });
});
