/**
 * What only a real Redis Cluster shows: three shards land on three different masters, every
 * shard's keys stay in its one slot, and a master that dies takes down its own shard only
 * (clear RUNTIME_UNAVAILABLE errors naming it) while the other shards keep creating, running
 * and answering for their tasks.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { clusterSlotOf } from '../../src/runtime/bullmq/keys.js';
import { newRecord, quietLogger, randomPrefix, waitForRecord } from '../bullmq/support.js';
import { describeWithClusterBinaries, type LocalCluster, startLocalCluster } from './local-cluster.js';

class FinishingExecutor implements TaskExecutor {
  readonly ran: string[] = [];
  async execute(record: TaskRecord) {
    this.ran.push(record.taskId);
    return { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };
  }
}

describeWithClusterBinaries('bullmq runtime on Redis Cluster', () => {
  let cluster: LocalCluster;
  let closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster(3);
  }, 60_000);

  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    closers = [];
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  function startRuntime(prefix: string, options: { operationTimeoutMs?: number } = {}): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({
      connection: cluster.connection,
      prefix,
      shards: 3,
      logger: quietLogger,
      ...options,
    });
    closers.push(() => runtime.close());
    return runtime;
  }

  function startWorker(prefix: string, executor: TaskExecutor): TaskWorker {
    const worker = new TaskWorker({
      connection: cluster.connection,
      prefix,
      shards: 3,
      executor,
      concurrency: 6,
      shutdownGraceMs: 200,
      logger: quietLogger,
    });
    closers.push(() => worker.close());
    return worker;
  }

  /** A new record whose id falls on `shard`. */
  function recordOnShard(runtime: BullmqTaskRuntime, shard: number, overrides: Partial<NewTaskRecord> = {}) {
    for (;;) {
      const record = newRecord({}, overrides);
      if (runtime.names.shardOf(record.taskId).index === shard) return record;
    }
  }

  async function keysOn(port: number, pattern: string): Promise<string[]> {
    const client = cluster.client(port);
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  }

  it('puts three shards on three masters, each shard in one slot, and runs and lists tasks across them', async () => {
    const prefix = randomPrefix();
    const runtime = startRuntime(prefix);
    const masters = await Promise.all(runtime.names.shards.map((shard) => cluster.masterOf(shard.queue.slice(1, -1))));
    expect(new Set(masters.map((master) => master.port)).size).toBe(3);

    const created: TaskRecord[] = [];
    for (let i = 0; i < 30; i++) created.push(await runtime.create(newRecord({}, { createdAt: Date.now() + i })));
    const bobs = await runtime.create(newRecord({}, { owner: 'bob' }));
    const executor = new FinishingExecutor();
    await startWorker(prefix, executor).started;
    for (const task of [...created, bobs]) {
      await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');
    }
    expect(executor.ran.sort()).toEqual([...created, bobs].map((task) => task.taskId).sort());

    // Every master holds records, and every key of the app on a master belongs to the shard it owns.
    for (const [index, master] of masters.entries()) {
      const keys = await keysOn(master.port, `${prefix}:*`);
      const tag = runtime.names.shards[index]?.queue as string;
      expect(keys.filter((key) => key.includes(':task:')).length).toBeGreaterThan(0);
      for (const key of keys) expect(clusterSlotOf(hashTagOf(key))).toBe(clusterSlotOf(tag.slice(1, -1)));
    }

    // Alice's listing merges the three shards in creation order, page by page; Bob's task is not in it.
    const listed: string[] = [];
    let page = await runtime.list('alice', 7);
    listed.push(...page.records.map((record) => record.taskId));
    while (page.next) {
      page = await runtime.list('alice', 7, page.next);
      listed.push(...page.records.map((record) => record.taskId));
    }
    expect(listed).toEqual(created.map((task) => task.taskId));
    expect((await runtime.list('bob', 50)).records.map((record) => record.taskId)).toEqual([bobs.taskId]);
  });

  it('fails the shard of a killed master with clear errors, and keeps serving the other shards', async () => {
    const prefix = randomPrefix();
    const runtime = startRuntime(prefix, { operationTimeoutMs: 1500 });
    const executor = new FinishingExecutor();
    await startWorker(prefix, executor).started;
    const before = await runtime.create(recordOnShard(runtime, 0));
    await waitForRecord(runtime, before.taskId, (record) => record.status === 'completed');

    const lostShard = runtime.names.shards[0]?.queue as string;
    const lost = await cluster.masterOf(lostShard.slice(1, -1));
    await cluster.kill(lost.port);

    const onLostShard = [
      runtime.create(recordOnShard(runtime, 0)),
      runtime.get(before.taskId),
      runtime.cancel(before.taskId, 'cancelled by client'),
    ];
    for (const result of await Promise.allSettled(onLostShard)) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as { code: string; message: string };
      expect(reason.code).toBe('RUNTIME_UNAVAILABLE');
      expect(reason.message).toContain(`shard ${lostShard}`);
    }
    // A listing needs every shard: it fails rather than leave the lost shard's tasks out unsaid.
    await expect(runtime.list('alice', 10)).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });

    // The shards on the live masters still create, run, read and cancel.
    for (const shard of [1, 2]) {
      const task = await runtime.create(recordOnShard(runtime, shard));
      const done = await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');
      expect(done.outcome).toBeDefined();
      expect((await runtime.get(task.taskId))?.status).toBe('completed');
    }
    expect(executor.ran.length).toBe(3);
  });
});

/** The hash tag Redis Cluster hashes: what is between the first `{` and the next `}`. */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}
