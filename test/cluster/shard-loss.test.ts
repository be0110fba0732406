/**
 * A lost master costs its shard, and the principals homed there, nothing else: on a real
 * three-master Redis Cluster with one master killed, and with the live-task quota and fair
 * shares on (as a server sets them), creates on the other shards succeed and their tasks run
 * and read; creates on the lost shard, and those of a principal whose home is the lost shard,
 * fail within 5 s naming the shard; a listing names the shard it could not read; readiness
 * holds, and the stats leave the lost shard out, naming it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreateOptions, TaskExecutor } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { newRecord, quietLogger, randomPrefix, waitForRecord } from '../bullmq/support.js';
import { describeWithClusterBinaries, type LocalCluster, startLocalCluster } from './local-cluster.js';

const DONE = { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };
/** What a server passes with every create (the defaults of its limits). */
const LIMITS: CreateOptions = { maxLiveForOwner: 1000, maxRunningForOwner: 64 };

describeWithClusterBinaries('a lost master on a 3-master cluster', () => {
  let cluster: LocalCluster;
  let runtime: BullmqTaskRuntime;
  let worker: TaskWorker;
  const ran: string[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster(3);
    const prefix = randomPrefix();
    // The default deadline (3 s): the bound a client sees.
    runtime = new BullmqTaskRuntime({ connection: cluster.connection, prefix, shards: 3, logger: quietLogger });
    const executor: TaskExecutor = {
      execute: async (record: TaskRecord) => {
        ran.push(record.taskId);
        return DONE;
      },
    };
    worker = new TaskWorker({
      connection: cluster.connection,
      prefix,
      shards: 3,
      executor,
      concurrency: 6,
      shutdownGraceMs: 200,
      logger: quietLogger,
    });
    await worker.started;
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([worker?.close(), runtime?.close()]);
    await cluster?.stop();
  });

  /** A principal whose home shard is `home`. */
  function ownerHomedOn(home: number): string {
    for (let index = 0; ; index++) {
      const owner = `principal-${index}`;
      if (runtime.names.homeOf(owner).index === home) return owner;
    }
  }

  function recordOn(shard: number, owner: string): NewTaskRecord {
    for (;;) {
      const record = newRecord({}, { owner });
      if (runtime.names.shardOf(record.taskId).index === shard) return record;
    }
  }

  async function failsFastNaming(operation: Promise<unknown>, shard: string): Promise<void> {
    const began = Date.now();
    const outcome = await operation.then(
      () => undefined,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(Date.now() - began).toBeLessThan(5000);
    expect(outcome).toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
    expect(outcome?.message).toContain(shard);
  }

  it('keeps the other shards creating, running and reading; fails the lost one fast, by name', async () => {
    const lostIndex = 2;
    const lostShard = runtime.names.shards[lostIndex]?.queue as string;
    const healthy = [0, 1];
    const alice = ownerHomedOn(0);
    const homedOnLost = ownerHomedOn(lostIndex);
    // Before: every shard serves alice, and the principal homed on the lost shard too.
    const before: TaskRecord[] = [];
    for (const shard of [0, 1, 2]) before.push(await runtime.create(recordOn(shard, alice), LIMITS));
    before.push(await runtime.create(recordOn(0, homedOnLost), LIMITS));
    for (const task of before) await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');

    const master = await cluster.masterOf(lostShard.slice(1, -1));
    await cluster.kill(master.port);

    // Creates on the lost shard fail within 5 s, naming it; so do reads of its tasks.
    await failsFastNaming(runtime.create(recordOn(lostIndex, alice), LIMITS), `shard ${lostShard}`);
    await failsFastNaming(runtime.get(before[lostIndex]?.taskId as string), `shard ${lostShard}`);
    // A principal homed on the lost shard cannot create anywhere: its quota lives there.
    await failsFastNaming(runtime.create(recordOn(0, homedOnLost), LIMITS), `home shard ${lostShard}`);
    // A listing needs every shard, and says which one it could not read.
    await failsFastNaming(runtime.list(alice, 10), lostShard);

    // The healthy shards create, run (fair share and quota on alice's healthy home) and read.
    const began = Date.now();
    const after: TaskRecord[] = [];
    for (let round = 0; round < 4; round++) {
      for (const shard of healthy) after.push(await runtime.create(recordOn(shard, alice), LIMITS));
    }
    for (const task of after) {
      const done = await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed');
      expect(done.outcome).toEqual(DONE);
      expect((await runtime.get(task.taskId))?.status).toBe('completed');
    }
    expect(Date.now() - began).toBeLessThan(15_000);
    expect(ran).toEqual(expect.arrayContaining(after.map((task) => task.taskId)));
    // Earlier tasks on healthy shards read as before.
    for (const index of healthy) expect((await runtime.get(before[index]?.taskId as string))?.status).toBe('completed');

    // The server stays ready (one master answers), and its stats leave the lost shard out, by name.
    await expect(runtime.checkReady()).resolves.toBeUndefined();
    await expect(worker.checkReady()).resolves.toBeUndefined();
    const stats = await runtime.stats();
    expect(stats.unavailableShards).toContain(lostShard);
    expect(stats.queue).toBeDefined();
  }, 60_000);
});
