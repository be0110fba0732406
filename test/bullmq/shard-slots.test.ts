/**
 * A worker process that consumes several shards runs up to its `concurrency` jobs from any of
 * them: the runs on one shard never stop that shard's other jobs while the process has room.
 * (The slots were once split between the shards' workers; one principal's fair share of
 * long runs on one shard then held that shard's whole part, and another principal's task there
 * stayed queued, which the 3-shard contract's flood case hit about once in ten runs.)
 */
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { newTaskId } from '../../src/engine/engine.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { runtimeNames } from '../../src/runtime/bullmq/keys.js';
import { ScriptedExecutor, waitUntil } from '../contract/runtime-contract.js';
import { useRedisScope } from '../support/redis-scope.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, waitForRecord } from './support.js';

const SHARDS = 3;

describeWithRedis('worker slots across shards', () => {
  const scope = useRedisScope();

  /** A runtime with a worker of `concurrency` slots over the shards, closed after the test. */
  async function startRuntime(executor: ScriptedExecutor, concurrency: number): Promise<BullmqTaskRuntime> {
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      shards: SHARDS,
      logger: quietLogger,
      worker: { executor, concurrency, shutdownGraceMs: 200, logger: quietLogger },
    });
    scope.onClose(() => runtime.close());
    await runtime.worker?.started;
    return runtime;
  }

  /** A record on shard `index` (its id alone decides its shard). */
  function onShard(index: number, owner: string) {
    const names = runtimeNames(scope.prefix, undefined, SHARDS);
    let taskId = newTaskId();
    while (names.shardOf(taskId).index !== index) taskId = newTaskId();
    return newRecord({ script: 'hold' }, { taskId, owner });
  }

  it("starts another principal's task on the shard where one principal's share runs, while the process has room", async () => {
    const executor = new ScriptedExecutor();
    // Three slots over three shards: a split would give each shard's worker one.
    const runtime = await startRuntime(executor, 3);
    const share = { maxRunningForOwner: 1 };
    const alices = [await runtime.create(onShard(0, 'alice'), share), await runtime.create(onShard(0, 'alice'), share)];
    await waitUntil(() => executor.held.size === 1, 10_000);
    const bobs = await runtime.create(onShard(0, 'bob'), share);
    // Alice's run holds one slot of three; her second task waits for her share, Bob's starts.
    await waitUntil(() => executor.held.has(bobs.taskId), 10_000);
    expect(executor.mostAtOnce.get('alice')).toBe(1);
    const waiting = alices.find((task) => !executor.held.has(task.taskId));
    const told = await waitForRecord(runtime, waiting?.taskId as string, (record) => record.statusMessage !== 'queued');
    expect(told.statusMessage).toBe('queued (1 running for this caller)');
    executor.releaseHeld();
    await waitUntil(() => executor.started.length === 3 && executor.held.size > 0, 10_000);
    executor.releaseHeld();
  });

  it('runs at most `concurrency` jobs at once over all its shards', async () => {
    const executor = new ScriptedExecutor();
    const runtime = await startRuntime(executor, 2);
    // Six runs queued at once, two on each shard: every shard's worker may take two of them.
    const tasks = [];
    for (const index of [0, 0, 1, 1, 2, 2]) tasks.push(await runtime.create(onShard(index, 'alice')));
    while (executor.started.length < tasks.length || executor.held.size > 0) {
      await waitUntil(() => executor.held.size > 0, 10_000);
      executor.releaseHeld();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(executor.mostAtOnce.get('alice')).toBe(2);
  });

  it('holds at most one job per shard beyond `concurrency` while every shard has work', async () => {
    const executor = new ScriptedExecutor();
    const concurrency = 4;
    const runtime = await startRuntime(executor, concurrency);
    // Five runs queued on each shard: a shard's worker taking up to `concurrency` would hold
    // 12 jobs, 8 of them waiting in the process for a slot (and each reading its record again).
    for (const index of [0, 1, 2]) {
      for (let task = 0; task < 5; task++) await runtime.create(onShard(index, 'alice'));
    }
    await waitUntil(() => executor.held.size === concurrency, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const active = await activeJobs();
    expect(executor.held.size).toBe(concurrency);
    expect(active).toBeGreaterThanOrEqual(concurrency);
    expect(active).toBeLessThanOrEqual(concurrency + SHARDS - 1);
    // And all fifteen still run, none left waiting.
    while (executor.started.length < 15 || executor.held.size > 0) {
      await waitUntil(() => executor.held.size > 0, 10_000);
      executor.releaseHeld();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(executor.mostAtOnce.get('alice')).toBe(concurrency);
  });

  it('gives a slot that a drained shard frees to a shard whose loop waits on its own runs', async () => {
    const executor = new ScriptedExecutor();
    const runtime = await startRuntime(executor, 3);
    const first = await runtime.create(onShard(0, 'alice'));
    await waitUntil(() => executor.held.has(first.taskId), 10_000);
    const others: string[] = [];
    for (let task = 0; task < 4; task++) others.push((await runtime.create(onShard(1, 'alice'))).taskId);
    // Shard 1 holds the two free slots; its loop waits for one of them to end.
    await waitUntil(() => executor.held.size === 3, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const running = others.filter((taskId) => executor.held.has(taskId));
    expect(running).toHaveLength(2);
    // Shard 0's run ends and its queue is empty: shard 1 takes the slot while its runs go on.
    executor.release(first.taskId);
    await waitUntil(() => others.filter((taskId) => executor.held.has(taskId)).length === 3, 5_000);
    expect(running.every((taskId) => executor.held.has(taskId))).toBe(true);
    while (executor.started.length < 5 || executor.held.size > 0) {
      await waitUntil(() => executor.held.size > 0, 10_000);
      executor.releaseHeld();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it("takes a shard's next job while its runs last and another shard refills its own slot", async () => {
    const executor = new ScriptedExecutor();
    const runtime = await startRuntime(executor, 3);
    // A full process: two long runs on shard 0, one on shard 1.
    const long = [await runtime.create(onShard(0, 'alice')), await runtime.create(onShard(0, 'alice'))];
    const third = await runtime.create(onShard(1, 'bob'));
    await waitUntil(() => executor.held.size === 3, 10_000);
    const quick: string[] = [];
    for (let task = 0; task < 100; task++) {
      const record = onShard(1, 'bob');
      quick.push((await runtime.create({ ...record, args: { script: 'finish' } })).taskId);
    }
    const next = await runtime.create(onShard(0, 'carol'));
    // Shard 1's quick runs each end in a completion that fetches the next: without turns,
    // shard 0's loop (waiting on its two runs) would see no free slot until shard 1 drained.
    executor.release(third.taskId);
    await waitUntil(() => executor.held.has(next.taskId), 10_000);
    const quickDone = quick.filter((taskId) => executor.started.includes(taskId)).length;
    expect(quickDone).toBeLessThan(quick.length / 2);
    expect(long.every((task) => executor.held.has(task.taskId))).toBe(true);
    executor.releaseHeld();
    await waitUntil(() => quick.every((taskId) => executor.started.includes(taskId)), 10_000);
  });

  /** BullMQ's active jobs over every shard's queue. */
  async function activeJobs(): Promise<number> {
    const names = runtimeNames(scope.prefix, undefined, SHARDS);
    const redis = new Redis(REDIS_URL);
    try {
      let total = 0;
      for (const shard of names.shards) total += await redis.llen(`${names.prefix}:${shard.queue}:active`);
      return total;
    } finally {
      redis.disconnect();
    }
  }
});
