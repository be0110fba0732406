/**
 * Runtime behaviour the contract suite cannot see: what is in Redis (expiry, owner index, the
 * queue), a restart of the server-side runtime, and an unreachable Redis.
 */
import { Queue } from 'bullmq';
import { afterEach, expect, it, vi } from 'vitest';
import { TaskEngine } from '../../src/engine/engine.js';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { sleep } from '../contract/runtime-contract.js';
import { useRedisScope } from '../support/redis-scope.js';
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

/** Records the tasks it was asked to run and finishes each at once. */
class CountingExecutor implements TaskExecutor {
  readonly ran: string[] = [];
  async execute(record: TaskRecord) {
    this.ran.push(record.taskId);
    return { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };
  }
}

describeWithRedis('bullmq runtime storage', () => {
  const scope = useRedisScope();

  function startRuntime(): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    return runtime;
  }

  function startWorker(executor: TaskExecutor, orphanWaitMs?: number): TaskWorker {
    const worker = new TaskWorker({
      connection: REDIS_URL,
      prefix: scope.prefix,
      executor,
      logger: quietLogger,
      ...(orphanWaitMs !== undefined && { orphanWaitMs }),
    });
    scope.onClose(() => worker.close());
    return worker;
  }

  it('keeps a task across a restart of the runtime, and a worker started later runs it', async () => {
    const before = startRuntime();
    const created = await before.create(newRecord({}));
    await before.close();

    const after = startRuntime();
    expect(await after.get(created.taskId)).toEqual(created);
    expect((await after.list('alice', 10)).records.map((r) => r.taskId)).toEqual([created.taskId]);
    const executor = new CountingExecutor();
    startWorker(executor);
    const done = await waitForRecord(after, created.taskId, (record) => record.status === 'completed');
    expect(done.statusMessage).toBeUndefined();
    expect(executor.ran).toEqual([created.taskId]);
  });

  it('expires records at createdAt + ttlMs through Redis, and drops expired ids from the owner index', async () => {
    const runtime = startRuntime();
    const shortLived = await runtime.create(newRecord({}, { ttlMs: 300 }));
    const kept = await runtime.create(newRecord({}, { ttlMs: 60_000 }));
    const forever = await runtime.create(newRecord({}, { owner: 'bob', ttlMs: null }));
    const names = runtime.names;
    await withRedis(async (redis) => {
      expect(await redis.pexpiretime(names.record(shortLived.taskId))).toBe(shortLived.createdAt + 300);
      expect(await redis.pexpiretime(names.record(kept.taskId))).toBe(kept.createdAt + 60_000);
      // The owner index lives as long as its longest-lived task.
      expect(await redis.pexpiretime(names.shards[0]!.owner('alice'))).toBe(kept.createdAt + 60_000);
      expect(await redis.pttl(names.record(forever.taskId))).toBe(-1);
      expect(await redis.pttl(names.shards[0]!.owner('bob'))).toBe(-1);
    });

    await sleep(shortLived.createdAt + 300 - Date.now() + 50);
    expect(await runtime.get(shortLived.taskId)).toBeUndefined();
    expect((await runtime.list('alice', 10)).records.map((r) => r.taskId)).toEqual([kept.taskId]);
    await withRedis(async (redis) => {
      expect(await redis.zrange(names.shards[0]!.owner('alice'), '0', '-1')).toEqual([kept.taskId]);
    });
  });

  it('lists tasks created in the same millisecond by id, across pages, each once', async () => {
    const runtime = startRuntime();
    const createdAt = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await runtime.create(newRecord({}, { createdAt }))).taskId);
    const seen: string[] = [];
    let page = await runtime.list('alice', 2);
    seen.push(...page.records.map((r) => r.taskId));
    while (page.next) {
      page = await runtime.list('alice', 2, page.next);
      seen.push(...page.records.map((r) => r.taskId));
    }
    expect(seen).toEqual([...ids].sort());
  });

  it('removes a waiting job on cancel, so no worker ever runs it', async () => {
    const runtime = startRuntime();
    const task = await runtime.create(newRecord({}));
    const queue = new Queue(runtime.names.shards[0]!.queue, { connection: { url: REDIS_URL }, prefix: scope.prefix });
    scope.onClose(() => queue.close());
    expect(await queue.getJobState(task.taskId)).toBe('waiting');

    expect((await runtime.cancel(task.taskId, 'cancelled by client'))?.status).toBe('cancelled');
    expect(await queue.getJobState(task.taskId)).toBe('unknown');
    const executor = new CountingExecutor();
    await startWorker(executor).started;
    const other = await runtime.create(newRecord({}));
    await waitForRecord(runtime, other.taskId, (record) => record.status === 'completed');
    expect(executor.ran).toEqual([other.taskId]);
  });

  it('runs nothing for a job whose record is missing (its creation died half-way), and fails it as an orphan', async () => {
    const runtime = startRuntime();
    const queue = new Queue(runtime.names.shards[0]!.queue, { connection: { url: REDIS_URL }, prefix: scope.prefix });
    scope.onClose(() => queue.close());
    await queue.add('t', { tool: 't' }, { jobId: 'orphan-job' });
    const executor = new CountingExecutor();
    await startWorker(executor, 300).started;
    const task = await runtime.create(newRecord({}));
    await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');
    expect(executor.ran).toEqual([task.taskId]);
    // Looked for its record a while, then failed (this job kept BullMQ's default retention).
    // It runs beside the task, and reads its record where the task starts from its snapshot.
    await vi.waitFor(async () => expect(await queue.getJobState('orphan-job')).toBe('failed'), { timeout: 5000 });
    expect(executor.ran).toEqual([task.taskId]);
  });

  it('reports RUNTIME_UNAVAILABLE within its deadline when Redis cannot be reached, and closes without hanging', async () => {
    // Nothing listens on port 1.
    const runtime = new BullmqTaskRuntime({
      connection: 'redis://127.0.0.1:1',
      prefix: scope.prefix,
      operationTimeoutMs: 1500,
      logger: quietLogger,
    });
    scope.onClose(() => runtime.close());
    const startedAt = Date.now();
    const results = await Promise.allSettled([runtime.create(newRecord({})), runtime.get('some-task')]);
    const elapsed = Date.now() - startedAt;
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
    }
    expect(elapsed).toBeLessThan(2500);
  });
  it('undoes the record when enqueuing the job fails, so no half-created task remains', async () => {
    const runtime = startRuntime();
    // A real Redis failure: BullMQ's add script appends to the queue's event stream, and a
    // string under that key makes it fail with WRONGTYPE after our record was written.
    await withRedis((redis) => redis.set(`${scope.prefix}:${runtime.names.shards[0]!.queue}:events`, 'not a stream'));
    const record = newRecord({});
    await expect(runtime.create(record)).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
    await expect
      .poll(() => withRedis((redis) => redis.exists(runtime.names.record(record.taskId))), { timeout: 2000 })
      .toBe(0);
    await withRedis(async (redis) => {
      expect(await redis.zscore(runtime.names.shards[0]!.owner('alice'), record.taskId)).toBeNull();
    });
    expect(await runtime.get(record.taskId)).toBeUndefined();
  });

  it('prunes dead ids from the owner index on every insert, by expiry, even if nobody lists', async () => {
    const runtime = startRuntime();
    // One live task first, then many short-lived ones behind it (a 2026 client never lists).
    const live = await runtime.create(newRecord({}, { ttlMs: 60_000 }));
    for (let index = 0; index < 40; index++) await runtime.create(newRecord({}, { ttlMs: 300 }));
    await sleep(500);
    const next = await runtime.create(newRecord({}, { ttlMs: 60_000 }));
    await withRedis(async (redis) => {
      expect((await redis.zrange(runtime.names.shards[0]!.owner('alice'), '0', '-1')).sort()).toEqual(
        [live.taskId, next.taskId].sort(),
      );
      expect(await redis.zcard(runtime.names.shards[0]!.ownerExpiries('alice'))).toBe(2);
    });
  });

  it('spreads tasks over shards on one Redis; a worker given some shards runs only their tasks', async () => {
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      shards: 3,
      logger: quietLogger,
    });
    scope.onClose(() => runtime.close());
    const onShard = (shard: number) => {
      for (;;) {
        const record = newRecord({});
        if (runtime.names.shardOf(record.taskId).index === shard) return record;
      }
    };
    const [first, second, third] = [
      await runtime.create(onShard(0)),
      await runtime.create(onShard(1)),
      await runtime.create(onShard(2)),
    ];
    const executor = new CountingExecutor();
    const worker = new TaskWorker({
      connection: REDIS_URL,
      prefix: scope.prefix,
      shards: 3,
      consumeShards: [0, 2],
      executor,
      logger: quietLogger,
    });
    scope.onClose(() => worker.close());
    for (const task of [first, third])
      await waitForRecord(runtime, task!.taskId, (record) => record.status === 'completed');
    await sleep(300);
    expect(executor.ran.sort()).toEqual([first!.taskId, third!.taskId].sort());
    expect((await runtime.get(second!.taskId))?.status).toBe('working');
    expect(
      () => new TaskWorker({ connection: REDIS_URL, prefix: scope.prefix, shards: 3, consumeShards: [3], executor }),
    ).toThrow(/consumeShards: 3 is not a shard; the app has shards 0 to 2/);
  });
});

describeWithRedis('bullmq runtime events after a dropped connection', () => {
  const prefix = randomPrefix();
  const closers: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    await deleteKeysUnder(prefix);
  });

  it('wakes a waiter whose task ended while its event connection was down', async () => {
    // A queue name of this test's own: connection names carry it, so the connections found
    // below are this test's, whatever else shares the Redis server.
    const queue = `gap${prefix.replaceAll('-', '')}`;
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue, logger: quietLogger });
    closers.push(() => runtime.close());
    // A second runtime, so the completion is written through a connection that stays up.
    const writer = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue, logger: quietLogger });
    closers.push(() => writer.close());
    const engine = new TaskEngine({ runtime });
    const task = await engine.create({ principal: 'alice' }, { tool: 't', args: {} });
    const waiting = engine.waitForTerminal({ principal: 'alice' }, task.taskId);
    await sleep(50);

    // Drop the waiting runtime's event subscriber, then finish the task before it reconnects:
    // the completion event is published while nobody of that runtime listens.
    const subscriberName = `${runtime.names.queue}:events`;
    const ids = await subscriberIds(subscriberName);
    // Both runtimes' subscribers carry the name, but only the waiting one subscribes: the
    // writer has no listener.
    expect(ids.length).toBe(1);
    await withRedis(async (client) => {
      for (const id of ids) await client.client('KILL', 'ID', id);
    });
    await writer.cancel(task.taskId, 'cancelled during the outage');

    const done = await Promise.race([waiting, sleep(5_000).then(() => undefined)]);
    expect(done?.status).toBe('cancelled');
    // Let the subscriber finish re-subscribing before the runtimes close, so no command of its
    // is cut off mid-flight.
    for (let attempt = 0; attempt < 50 && (await subscriberIds(subscriberName)).length < 1; attempt++) await sleep(50);
  });
});

/** Ids of the subscribed connections named `name` (a name only this test's runtimes use). */
async function subscriberIds(name: string): Promise<string[]> {
  return withRedis(async (client) => {
    const list = (await client.client('LIST')) as string;
    return list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `) && /\bsub=[1-9]/.test(line))
      .flatMap((line) => /id=(\d+)/.exec(line)?.[1] ?? []);
  });
}
