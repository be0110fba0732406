/**
 * Failover figures for docs/guide/high-availability.md, on local processes (run by hand, not
 * part of `npm run bench`: each failover takes seconds of real time):
 *
 * - time without service for creates on a shard whose primary is SIGKILLed, from the kill to
 *   the first acknowledged create, under a load of 4 creators: on a Redis Cluster with one
 *   replica per master (`cluster-node-timeout` 1000 ms, each of the three masters in turn) and
 *   under Sentinel (`down-after-milliseconds` 1000, three sentinels, one fresh group per run);
 * - with it, the acknowledged tasks lost (each checked after the promotion);
 * - the cost of `durability: 'replicated'` (`WAIT 1` after every create): creates per second at
 *   50 in flight and one at a time, against `'primary'` on the same primary + replica,
 *   interleaved rounds (the ratio is the median of per-round ratios).
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/failover.ts [runs]
 */
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, type CreateDurability, TaskWorker } from '../src/runtime/bullmq/index.js';
import {
  describeLost,
  lostTasks,
  recordOnShard,
  refusedReads,
  ShortWork,
  sleep,
  startCreateLoad,
} from '../test/cluster/failover-load.js';
import { startLocalSentinelGroup } from '../test/cluster/local-sentinel.js';
import { startLocalCluster } from '../test/support/local-redis.js';
import { fmt, median, type Row, report, runMain, uniquePrefix } from './support.js';

const AOF = ['--appendonly', 'yes', '--appendfsync', 'everysec'];
const runs = Number(process.argv[2] ?? 3);

interface Outage {
  readonly ms: number;
  readonly acknowledged: number;
  readonly lost: number;
  /** Creates refused after the first one acknowledged since the kill. */
  readonly refusedAfter: number;
  /** Reads refused while checking, and the last one's time after the first ack. */
  readonly refusedReads: number;
  readonly lastRefusedReadMs?: number;
}

async function underLoad(runtime: BullmqTaskRuntime, shard: number, kill: () => Promise<void>): Promise<Outage> {
  const load = startCreateLoad(runtime, shard, 4);
  await sleep(1000);
  const killAt = Date.now();
  await kill();
  // A create sent while the process was still dying may succeed: service is back once one sent after its death does.
  const killedAt = Date.now();
  const backAt = await load.firstAckAfter(killedAt, 30_000);
  await sleep(500);
  await load.stop();
  const readsBefore = refusedReads.length;
  const lost = await lostTasks(runtime, load.acknowledged, killAt);
  const reads = refusedReads.slice(readsBefore);
  const last = reads.at(-1);
  if (last) console.log(`  a refused read: ${last.message}`);
  if (lost.length > 0) console.log(`  ${describeLost(lost)}`);
  return {
    ms: backAt - killAt,
    acknowledged: load.acknowledged.length,
    lost: lost.length,
    refusedAfter: load.failures.filter((failure) => failure.at > backAt).length,
    refusedReads: reads.length,
    ...(last && { lastRefusedReadMs: last.at - backAt }),
  };
}

async function clusterOutages(): Promise<Outage[]> {
  const cluster = await startLocalCluster(3, { replicas: 1, serverArgs: AOF, nodeTimeoutMs: 1000 });
  const prefix = uniquePrefix('failover');
  const runtime = new BullmqTaskRuntime({ connection: cluster.connection, prefix, shards: 3, logger: silentLogger });
  const worker = new TaskWorker({
    connection: cluster.connection,
    prefix,
    shards: 3,
    executor: new ShortWork(),
    concurrency: 8,
    logger: silentLogger,
  });
  try {
    const outages: Outage[] = [];
    for (let shard = 0; shard < 3; shard++) {
      const queue = runtime.names.shards[shard]?.queue ?? '';
      const master = await cluster.masterOf(queue.slice(1, -1));
      outages.push(await underLoad(runtime, shard, () => cluster.kill(master.port)));
      console.log(`cluster, shard ${shard}: ${JSON.stringify(outages.at(-1))}`);
    }
    return outages;
  } finally {
    await worker.close();
    await runtime.close();
    await cluster.stop();
  }
}

async function sentinelRun(measureCost: boolean): Promise<{ outage: Outage; cost?: Row[] }> {
  const group = await startLocalSentinelGroup({ serverArgs: AOF });
  const prefix = uniquePrefix('failover');
  const make = (durability: CreateDurability) =>
    new BullmqTaskRuntime({ connection: group.connection, prefix, durability, logger: silentLogger });
  const runtime = make('primary');
  const replicated = make('replicated');
  const worker = new TaskWorker({
    connection: group.connection,
    prefix,
    executor: new ShortWork(),
    concurrency: 8,
    logger: silentLogger,
  });
  try {
    const cost = measureCost ? await durabilityCost(runtime, replicated) : undefined;
    const primary = await group.primaryPort();
    const outage = await underLoad(runtime, 0, () => group.kill(primary));
    console.log(`sentinel: ${JSON.stringify(outage)}`);
    return { outage, ...(cost && { cost }) };
  } finally {
    await worker.close();
    await replicated.close();
    await runtime.close();
    await group.stop();
  }
}

/** Creates per second, `inFlight` at a time, for `ms`. */
async function rate(runtime: BullmqTaskRuntime, inFlight: number, ms: number): Promise<number> {
  let done = 0;
  const until = Date.now() + ms;
  const start = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) {
        await runtime.create(recordOnShard(runtime, 0));
        done++;
      }
    }),
  );
  return (done * 1000) / (Date.now() - start);
}

async function durabilityCost(primary: BullmqTaskRuntime, replicated: BullmqTaskRuntime): Promise<Row[]> {
  await rate(primary, 10, 500);
  await rate(replicated, 10, 500);
  const rows: Row[] = [];
  for (const inFlight of [1, 50]) {
    const ratios: number[] = [];
    const seen: { primary: number[]; replicated: number[] } = { primary: [], replicated: [] };
    for (let round = 0; round < 6; round++) {
      const order = round % 2 === 0 ? (['primary', 'replicated'] as const) : (['replicated', 'primary'] as const);
      const got: Record<string, number> = {};
      for (const side of order) got[side] = await rate(side === 'primary' ? primary : replicated, inFlight, 1000);
      seen.primary.push(got.primary as number);
      seen.replicated.push(got.replicated as number);
      ratios.push((got.replicated as number) / (got.primary as number));
    }
    rows.push({
      bench: 'failover',
      metric: `creates/s, ${inFlight} in flight: replicated vs primary`,
      framework: fmt(median(seen.replicated)),
      baseline: fmt(median(seen.primary)),
      ratio: median(ratios),
    });
  }
  return rows;
}

runMain(async () => {
  const cluster: Outage[] = [];
  for (let run = 0; run < Math.ceil(runs / 3); run++) cluster.push(...(await clusterOutages()));
  const sentinel: Outage[] = [];
  let cost: Row[] = [];
  for (let run = 0; run < runs; run++) {
    const result = await sentinelRun(run === 0);
    sentinel.push(result.outage);
    if (result.cost) cost = result.cost;
  }
  const summary = (name: string, outages: Outage[]) => {
    const times = outages.map((outage) => outage.ms).sort((a, b) => a - b);
    const lost = outages.reduce((sum, outage) => sum + outage.lost, 0);
    const acknowledged = outages.reduce((sum, outage) => sum + outage.acknowledged, 0);
    console.log(
      `${name}: ${outages.length} failovers, no creates for median ${median(times)} ms (min ${times[0]}, max ${times.at(-1)}); ${lost} of ${acknowledged} acknowledged tasks lost`,
    );
  };
  console.log('');
  summary('cluster (cluster-node-timeout 1000 ms)', cluster);
  summary('sentinel (down-after-milliseconds 1000)', sentinel);
  report(cost);
});
