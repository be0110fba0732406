/**
 * Failover under Redis Sentinel: one primary, one replica (AOF `everysec` on both) and three
 * sentinels (quorum 2, `down-after-milliseconds` 1000). The primary is SIGKILLed while a server
 * runtime creates tasks and a worker runs them; the sentinels promote the replica, and
 *
 * - the server and the worker find the new primary by themselves (ioredis asks the sentinels);
 * - every task acknowledged before the kill is still there and completes, and new creates
 *   succeed (the time without service is printed: docs/guide/high-availability.md quotes it);
 * - `durability: 'replicated'` acknowledges a create only once the replica has it.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { BullmqTaskRuntime, TaskWorker } from '../../src/runtime/bullmq/index.js';
import { quietLogger, randomPrefix, waitForRecord } from '../bullmq/support.js';
import {
  failoverOutcome,
  outsideWindow,
  recordOnShard,
  ShortWork,
  sleep,
  startCreateLoad,
  unfinishedSurvivors,
} from './failover-load.js';
import { describeWithClusterBinaries } from './local-cluster.js';
import { type LocalSentinelGroup, startLocalSentinelGroup } from './local-sentinel.js';

describeWithClusterBinaries('failover under Redis Sentinel', () => {
  let group: LocalSentinelGroup;
  let closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    group = await startLocalSentinelGroup({ serverArgs: ['--appendonly', 'yes', '--appendfsync', 'everysec'] });
  }, 60_000);

  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    closers = [];
  });

  afterAll(async () => {
    await group?.stop();
  });

  it('promotes the replica of a primary killed under load: server and worker carry on', async () => {
    const prefix = randomPrefix();
    const runtime = new BullmqTaskRuntime({ connection: group.connection, prefix, logger: quietLogger });
    closers.push(() => runtime.close());
    const replicated = new BullmqTaskRuntime({
      connection: group.connection,
      prefix,
      durability: 'replicated',
      logger: quietLogger,
    });
    closers.push(() => replicated.close());
    const work = new ShortWork();
    const worker = new TaskWorker({
      connection: group.connection,
      prefix,
      executor: work,
      concurrency: 8,
      shutdownGraceMs: 200,
      logger: quietLogger,
    });
    closers.push(() => worker.close());

    const confirmed = await replicated.create(recordOnShard(replicated, 0));
    await waitForRecord(runtime, confirmed.taskId, (record) => record.status === 'completed');

    const primary = await group.primaryPort();
    const load = startCreateLoad(runtime, 0, 2, 5);
    await sleep(1500);
    const killAt = Date.now();
    await group.kill(primary);
    const killedAt = Date.now();
    const backAt = await load.firstAckAfter(killedAt, 30_000);
    const promoted = await group.promotedFrom(primary);
    await sleep(1000);
    await load.stop();

    const { before, after, lost } = await failoverOutcome('sentinel failover', runtime, load, { killAt, backAt });
    expect(promoted).not.toBe(primary);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(outsideWindow(lost, 100, killedAt - killAt)).toEqual([]);
    for (const failure of load.failures) expect(failure.message).toMatch(/task store \(Redis\)/);

    // The worker followed the promotion: it runs what was acknowledged before and after.
    const left = await unfinishedSurvivors(runtime, load, lost, 30_000);
    expect(left).toEqual([]);
    expect(await runtime.get(confirmed.taskId)).toMatchObject({ status: 'completed' });

    // The promoted primary has no replica left: a replicated create is refused, not acknowledged.
    await expect(replicated.create(recordOnShard(replicated, 0))).rejects.toMatchObject({
      code: 'RUNTIME_UNAVAILABLE',
      message: expect.stringMatching(/No Redis replica confirmed/),
    });
  }, 60_000);
});
