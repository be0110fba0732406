/**
 * Failover on a Redis Cluster with replicas (three masters, one replica each, AOF `everysec`
 * on every node, `cluster-node-timeout` 1000 ms): the master of one shard is SIGKILLed while
 * tasks are being created on it and run; its replica takes over, and
 *
 * - every task acknowledged before the kill is still there and completes;
 * - creates on that shard succeed again once the replica is promoted (the time without service
 *   is printed: docs/guide/high-availability.md quotes it);
 * - what can be lost is what the master acknowledged but had not yet sent to its replica: a
 *   replica frozen and cut off on purpose shows that window, and that `durability: 'replicated'`
 *   acknowledges nothing inside it.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { BullmqTaskRuntime, type CreateDurability, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { quietLogger, randomPrefix } from '../bullmq/support.js';
import {
  failoverOutcome,
  lostTasks,
  outsideWindow,
  recordOnShard,
  ShortWork,
  sleep,
  startCreateLoad,
  unfinishedSurvivors,
} from './failover-load.js';
import { clusterClient, describeWithClusterBinaries, type LocalCluster, startLocalCluster } from './local-cluster.js';

const AOF = ['--appendonly', 'yes', '--appendfsync', 'everysec'];

describeWithClusterBinaries('failover on a Redis Cluster with replicas', () => {
  let cluster: LocalCluster;
  let closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster(3, { replicas: 1, serverArgs: AOF, nodeTimeoutMs: 1000 });
  }, 60_000);

  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    closers = [];
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  function startRuntime(prefix: string, durability: CreateDurability = 'primary'): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({
      connection: cluster.connection,
      prefix,
      shards: 3,
      durability,
      logger: quietLogger,
    });
    closers.push(() => runtime.close());
    return runtime;
  }

  function startWorker(prefix: string, executor: ShortWork): TaskWorker {
    const worker = new TaskWorker({
      connection: cluster.connection,
      prefix,
      shards: 3,
      executor,
      concurrency: 8,
      shutdownGraceMs: 200,
      logger: quietLogger,
    });
    closers.push(() => worker.close());
    return worker;
  }

  async function untilReady(worker: TaskWorker): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await worker.checkReady();
      } catch (error) {
        if (attempt > 50) throw error;
        await sleep(100);
      }
    }
  }

  /** The master of `shard` and its replica's port. */
  async function masterAndReplica(runtime: BullmqTaskRuntime, shard: number) {
    const queue = runtime.names.shards[shard]?.queue ?? '';
    const master = await cluster.masterOf(queue.slice(1, -1));
    const role = (await cluster.client(master.port).call('ROLE')) as [string, number, [string, string, string][]];
    const first = role[2][0];
    const replica = first ? Number(first[1]) : 0;
    if (!replica) throw new Error(`master ${master.port} has no replica`);
    return { master: master.port, replica };
  }

  it('promotes the replica of a master killed under load: the shard carries on, nothing acknowledged is lost', async () => {
    const prefix = randomPrefix();
    const runtime = startRuntime(prefix);
    const work = new ShortWork();
    const worker = startWorker(prefix, work);
    const { master } = await masterAndReplica(runtime, 0);
    // The failover is under test here, not a worker's start: take load once it takes jobs.
    await untilReady(worker);

    const load = startCreateLoad(runtime, 0, 2, 5);
    await sleep(1500);
    const killAt = Date.now();
    await cluster.kill(master);
    const killedAt = Date.now();
    const backAt = await load.firstAckAfter(killedAt, 20_000);
    await sleep(1000);
    await load.stop();

    const { before, after, lost } = await failoverOutcome('cluster failover (the shard)', runtime, load, {
      killAt,
      backAt,
    });
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    // Replication is asynchronous: only a task acknowledged in the last moment before the
    // master died may be missing (the documented window); nothing sent after the kill, nothing older.
    expect(outsideWindow(lost, 100, killedAt - killAt)).toEqual([]);
    // Refusals are clear runtime errors, not hangs.
    for (const failure of load.failures) expect(failure.message).toMatch(/task store \(Redis\)/);

    const left = await unfinishedSurvivors(runtime, load, lost, 30_000);
    if (left.length > 0) {
      // What became of each one's job, for the report.
      const probe = clusterClient(cluster);
      try {
        for (const task of left) {
          const ack = load.acknowledged.find((candidate) => candidate.taskId === task.taskId);
          const job = await probe.hgetall(runtime.names.shardOf(task.taskId).job(task.taskId));
          console.info(
            `unfinished ${task.taskId}: acknowledged ${ack ? killAt - ack.at : '?'} ms before the SIGKILL; job ${JSON.stringify(
              {
                exists: Object.keys(job).length > 0,
                processedOn: job.processedOn,
                attemptsMade: job.attemptsMade,
                failedReason: job.failedReason,
              },
            )}`,
          );
        }
      } finally {
        probe.disconnect();
      }
    }
    expect(left).toEqual([]);
  }, 60_000);

  it("loses what a master acknowledged but never replicated, unless durability is 'replicated'", async () => {
    const prefix = randomPrefix();
    const primary = startRuntime(prefix);
    const replicated = startRuntime(prefix, 'replicated');
    startWorker(prefix, new ShortWork());
    const { master, replica } = await masterAndReplica(primary, 1);

    // Sanity: with the replica up, a replicated create is acknowledged.
    const confirmed = await replicated.create(recordOnShard(replicated, 1));
    const start = Date.now();
    for (let index = 0; index < 20; index++) await replicated.create(recordOnShard(replicated, 1));
    const replicatedMs = (Date.now() - start) / 20;
    const startPlain = Date.now();
    for (let index = 0; index < 20; index++) await primary.create(recordOnShard(primary, 1));
    const primaryMs = (Date.now() - startPlain) / 20;

    // The window, made wide on purpose: the replica is frozen and its link cut, so what the
    // master acknowledges now reaches no replica before the master dies.
    cluster.pause(replica);
    await cluster.client(master).call('CLIENT', 'KILL', 'TYPE', 'replica');
    const inWindow = [];
    for (let index = 0; index < 3; index++) inWindow.push(await primary.create(recordOnShard(primary, 1)));
    await expect(replicated.create(recordOnShard(replicated, 1))).rejects.toMatchObject({
      code: 'RUNTIME_UNAVAILABLE',
      message: expect.stringMatching(/No Redis replica confirmed/),
    });
    const killAt = Date.now();
    await cluster.kill(master);
    cluster.resume(replica);

    // Promoted: the shard takes creates again.
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        await primary.create(recordOnShard(primary, 1));
        break;
      } catch (error) {
        if (Date.now() > until) throw error;
        await sleep(50);
      }
    }
    const lost = await lostTasks(
      primary,
      inWindow.map((task) => ({ taskId: task.taskId, at: killAt })),
      killAt,
    );
    console.info(
      `cluster loss window: ${lost.length} of ${inWindow.length} tasks acknowledged inside it lost; ` +
        `create ${primaryMs.toFixed(2)} ms (primary) vs ${replicatedMs.toFixed(2)} ms (replicated), sequential`,
    );
    expect(lost).toHaveLength(inWindow.length);
    // What 'replicated' acknowledged before the window survived the failover.
    expect(await primary.get(confirmed.taskId)).toBeDefined();
  }, 60_000);
});
