/**
 * Benchmark 6: scale. No-op tasks end to end (create → completed, as `bench/e2e.ts`) on a local
 * three-master Redis Cluster with the app's tasks over 1, 2 and 3 shards, and the same runtime
 * on one standalone Redis with 1 and 3 shards. Both Redis setups are started here (same
 * settings, no persistence, loopback) and torn down after, even on failure; the shared Redis
 * is not used.
 *
 * Process layout: one load process (the server side: creates, 50 in flight, and hears every
 * completion), `WORKER_PROCESSES` worker processes (each a `TaskWorker` on every shard of the
 * setup), and the Redis servers. Every setup is served by the same processes, started once, so
 * only the shard count and the Redis setup differ; rounds are interleaved across setups. Each
 * round records the CPU time of every process (Node: `process.cpuUsage`; Redis: `INFO cpu`),
 * which shows where the machine's cores go, and the commands each Redis server ran (`INFO
 * commandstats`), which shows how the work spreads over the masters whatever the machine's load.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/scale.ts
 */
import { Redis } from 'ioredis';
import { type LocalCluster, type LocalRedis, startLocalCluster, startLocalRedis } from '../test/support/local-redis.js';
import { ScaleChild, type ScaleSetup } from './scale-setups.js';
import { fmt, interleaved, median, type Row, report, runMain, uniquePrefix } from './support.js';

const WORKER_PROCESSES = 2;
/** Jobs each worker process runs at once, divided among a setup's shards. */
const WORKER_CONCURRENCY = 30;
const TASKS_PER_ROUND = 2000;
const WARM_UP_TASKS = 300;
const ROUNDS = 3;

/** One round of one setup: wall time, and CPU µs spent by each process during it. */
interface Sample {
  readonly ms: number;
  readonly nodeUs: Readonly<Record<string, number>>;
  readonly redisUs: Readonly<Record<string, number>>;
  /** Commands each Redis server ran (those inside scripts included), by command name. */
  readonly redisCalls: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** A Redis server whose counters we read, and which setups run on it. */
interface RedisServer {
  readonly name: string;
  readonly client: Redis;
  readonly backend: 'cluster' | 'single';
}

async function main(): Promise<void> {
  const teardown = new Teardown();
  const onSignal = () => void teardown.run().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const [cluster, single] = await Promise.all([
      teardown.started(startLocalCluster(3), (started) => started.stop()),
      teardown.started(startLocalRedis(), (started) => started.stop()),
    ]);
    const setups = setupsFor(cluster, single);
    const servers = redisServers(cluster, single);
    teardown.add(async () => {
      for (const server of servers) server.client.disconnect();
    });

    const load = new ScaleChild('load', './scale-load.ts', { setups });
    const workers = Array.from(
      { length: WORKER_PROCESSES },
      (_, index) =>
        new ScaleChild(`worker ${index + 1}`, './scale-worker.ts', { setups, concurrency: WORKER_CONCURRENCY, index }),
    );
    const children = [load, ...workers];
    teardown.add(() => Promise.all(children.map((child) => child.stop())));
    await Promise.all(children.map((child) => child.ready));

    const round = async (setup: ScaleSetup, n: number): Promise<Sample> => {
      const nodeBefore = await Promise.all(children.map((child) => child.cpuUs()));
      const redisBefore = await Promise.all(servers.map((server) => redisCounters(server.client)));
      const reply = await load.ask({ type: 'run', setup: setup.id, n });
      if (reply.type !== 'ran') throw new Error(`load: unexpected reply ${reply.type}`);
      if (reply.failed > 0) throw new Error(`${setup.name}: ${reply.failed} of ${n} tasks did not complete`);
      const nodeAfter = await Promise.all(children.map((child) => child.cpuUs()));
      const redisAfter = await Promise.all(servers.map((server) => redisCounters(server.client)));
      return {
        ms: reply.ms,
        nodeUs: Object.fromEntries(children.map((child, i) => [child.name, nodeAfter[i]! - nodeBefore[i]!])),
        redisUs: Object.fromEntries(
          servers.map((server, i) => [server.name, redisAfter[i]!.cpuUs - redisBefore[i]!.cpuUs]),
        ),
        redisCalls: Object.fromEntries(
          servers.map((server, i) => [server.name, callsBetween(redisBefore[i]!.calls, redisAfter[i]!.calls)]),
        ),
      };
    };

    for (const setup of setups) await round(setup, WARM_UP_TASKS);
    const samples = await interleaved(
      ROUNDS,
      Object.fromEntries(setups.map((setup) => [setup.id, () => round(setup, TASKS_PER_ROUND)])),
    );
    for (const setup of setups) describeSetup(setup, samples[setup.id]!, servers);
    report(rows(samples, servers));
  } finally {
    await teardown.run();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * What the run started, stopped last first, once, whether the run ends, fails or is
 * interrupted. A signal and the failure it causes in the run share one teardown, so neither
 * exits before it is done, and it waits for starts still under way (their servers too).
 */
class Teardown {
  private readonly steps: (() => Promise<unknown>)[] = [];
  private readonly starting = new Set<Promise<unknown>>();
  private finished: Promise<void> | undefined;
  /** Set once the teardown has taken its steps: a step added later runs at once. */
  private stepsTaken = false;

  add(step: () => Promise<unknown>): void {
    if (this.stepsTaken) void step().catch(() => {});
    else this.steps.push(step);
  }

  /** `starting`, with `stop` registered as soon as it has started. */
  started<T>(starting: Promise<T>, stop: (started: T) => Promise<unknown>): Promise<T> {
    const registered = starting.then((value) => {
      this.add(() => stop(value));
      return value;
    });
    this.starting.add(registered);
    return registered;
  }

  run(): Promise<void> {
    this.finished ??= (async () => {
      await Promise.allSettled(this.starting);
      this.stepsTaken = true;
      for (const step of this.steps.splice(0).reverse()) await step().catch(() => {});
    })();
    return this.finished;
  }
}

function setupsFor(cluster: LocalCluster, single: LocalRedis): ScaleSetup[] {
  const prefix = uniquePrefix('scale');
  const onCluster = (shards: number): ScaleSetup => ({
    id: `cluster-${shards}`,
    name: `cluster, ${shards} shard${shards > 1 ? 's' : ''}`,
    connection: cluster.connection,
    shards,
    prefix,
    queue: `cluster${shards}`,
  });
  const onSingle = (shards: number): ScaleSetup => ({
    id: `single-${shards}`,
    name: `single Redis, ${shards} shard${shards > 1 ? 's' : ''}`,
    connection: single.url,
    shards,
    prefix,
    queue: `single${shards}`,
  });
  const unbounded: ScaleSetup = {
    ...onCluster(3),
    id: 'cluster-3-unbounded',
    name: 'cluster, 3 shards, no live-task bound',
    maxLiveTasksPerOwner: null,
  };
  // As many worker processes as shards: each takes one shard with all of its concurrency.
  const workerPerShard: ScaleSetup = {
    ...onCluster(WORKER_PROCESSES),
    id: `cluster-${WORKER_PROCESSES}-pinned`,
    name: `cluster, ${WORKER_PROCESSES} shards, one worker process per shard`,
    queue: `cluster${WORKER_PROCESSES}pinned`,
    workerPerShard: true,
  };
  return [onCluster(1), onCluster(2), onCluster(3), unbounded, workerPerShard, onSingle(1), onSingle(3)];
}

function redisServers(cluster: LocalCluster, single: LocalRedis): RedisServer[] {
  return [
    ...cluster.nodes.map((node, index) => ({
      name: `cluster node ${index + 1}`,
      client: cluster.client(node.port),
      backend: 'cluster' as const,
    })),
    {
      name: 'single Redis',
      client: new Redis(single.port, '127.0.0.1', { maxRetriesPerRequest: 1 }),
      backend: 'single',
    },
  ];
}

/** What a Redis server has done so far: its CPU time and its commands (both from `INFO`). */
async function redisCounters(client: Redis): Promise<{ cpuUs: number; calls: Record<string, number> }> {
  // One INFO for both: its own call shows in the counts, once per read, whatever the setup.
  const info = String(await client.call('INFO', 'cpu', 'commandstats'));
  const seconds = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  const calls: Record<string, number> = {};
  for (const [, command, count] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[command!] = Number(count);
  return { cpuUs: Math.round((seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1e6), calls };
}

function callsBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([command, count]) => [command, count - (before[command] ?? 0)]));
}

const rate = (sample: Sample) => (TASKS_PER_ROUND / sample.ms) * 1000;
const sum = (values: Record<string, number>) => Object.values(values).reduce((a, b) => a + b, 0);

/** The Redis servers setup `id` runs on (the others idle during its rounds). */
function serversOf(id: string, servers: readonly RedisServer[]): RedisServer[] {
  return servers.filter((server) => server.backend === (id.startsWith('cluster') ? 'cluster' : 'single'));
}

/** A Redis server's share of a round: its CPU µs, or the commands it ran. */
type RedisMeasure = (sample: Sample, server: string) => number;
const redisCpu: RedisMeasure = (sample, server) => sample.redisUs[server]!;
const redisCommands: RedisMeasure = (sample, server) => sum(sample.redisCalls[server]!);

/** `measure` per task on the busiest Redis server of setup `id`, median over rounds. */
function busiestPerTask(
  id: string,
  list: readonly Sample[],
  servers: readonly RedisServer[],
  measure: RedisMeasure,
): number {
  const own = serversOf(id, servers);
  return median(list.map((s) => Math.max(...own.map((server) => measure(s, server.name))) / TASKS_PER_ROUND));
}

/** Tasks/s, then where the CPU went: % of one core per process, and µs per task. */
function describeSetup(setup: ScaleSetup, list: readonly Sample[], servers: readonly RedisServer[]): void {
  const share = (pick: (s: Sample) => number) => fmt(median(list.map((s) => (pick(s) / (s.ms * 1000)) * 100)));
  const perTask = (pick: (s: Sample) => number) => fmt(median(list.map((s) => pick(s) / TASKS_PER_ROUND)));
  const nodeNames = Object.keys(list[0]!.nodeUs);
  const own = serversOf(setup.id, servers);
  const busiest = busiestPerTask(setup.id, list, servers, redisCpu);
  console.log(
    `${setup.name}: ${fmt(median(list.map(rate)))} tasks/s (rounds ${list.map((s) => fmt(rate(s))).join(', ')})\n` +
      `  CPU, % of one core: ${nodeNames.map((name) => `${name} ${share((s) => s.nodeUs[name]!)}`).join(', ')}, ` +
      `${own.map((server) => `${server.name} ${share((s) => s.redisUs[server.name]!)}`).join(', ')}; ` +
      `all processes ${share((s) => sum(s.nodeUs) + sum(s.redisUs))} of 200\n` +
      `  CPU µs per task: Node ${perTask((s) => sum(s.nodeUs))}, Redis ${perTask((s) => sum(s.redisUs))} ` +
      `(busiest server ${fmt(busiest)}: one such server per core would take ~${fmt(1e6 / busiest)} tasks/s)\n` +
      `  Redis commands per task: ${callsPerTask(setup.id, list, servers)}`,
  );
}

/** Commands per task in all and on the busiest server, and the commonest ones (scripts' own included). */
function callsPerTask(id: string, list: readonly Sample[], servers: readonly RedisServer[]): string {
  const own = serversOf(id, servers);
  const all = median(list.map((s) => own.reduce((total, server) => total + redisCommands(s, server.name), 0)));
  const byCommand = new Map<string, number>();
  for (const sample of list) {
    for (const server of own) {
      for (const [command, count] of Object.entries(sample.redisCalls[server.name]!)) {
        byCommand.set(command, (byCommand.get(command) ?? 0) + count);
      }
    }
  }
  const commonest = [...byCommand]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([command, count]) => `${command} ${(count / (list.length * TASKS_PER_ROUND)).toFixed(1)}`);
  return (
    `${(all / TASKS_PER_ROUND).toFixed(1)} in all, ` +
    `${busiestPerTask(id, list, servers, redisCommands).toFixed(1)} on the busiest server; ${commonest.join(', ')}`
  );
}

function rows(samples: Record<string, Sample[]>, servers: readonly RedisServer[]): Row[] {
  const throughput = (metric: string, id: string, baseId: string): Row => {
    const list = samples[id]!;
    const base = samples[baseId]!;
    return {
      bench: '6 scale',
      metric,
      framework: `${fmt(median(list.map(rate)))}/s`,
      baseline: `${fmt(median(base.map(rate)))}/s`,
      ratio: median(list.map((s, i) => rate(s) / rate(base[i]!))),
    };
  };
  const busiest = (metric: string, id: string, baseId: string, measure: RedisMeasure, unit: string): Row => {
    const value = busiestPerTask(id, samples[id]!, servers, measure);
    const base = busiestPerTask(baseId, samples[baseId]!, servers, measure);
    const digits = unit === 'µs' ? 0 : 1;
    return {
      bench: '6 scale',
      metric,
      framework: `${fmt(value, digits)} ${unit}`,
      baseline: `${fmt(base, digits)} ${unit}`,
      ratio: value / base,
    };
  };
  return [
    throughput('no-op tasks/s, cluster: 2 shards vs 1', 'cluster-2', 'cluster-1'),
    throughput('no-op tasks/s, cluster: 3 shards vs 1', 'cluster-3', 'cluster-1'),
    throughput('no-op tasks/s, 1 shard: cluster vs single Redis', 'cluster-1', 'single-1'),
    throughput('no-op tasks/s, single Redis: 3 shards vs 1', 'single-3', 'single-1'),
    throughput('no-op tasks/s, cluster 3 shards: live-task bound off vs on', 'cluster-3-unbounded', 'cluster-3'),
    throughput(
      `no-op tasks/s, cluster ${WORKER_PROCESSES} shards: a worker process per shard vs all on each`,
      `cluster-${WORKER_PROCESSES}-pinned`,
      `cluster-${WORKER_PROCESSES}`,
    ),
    busiest('busiest node, commands per task, cluster: 2 shards vs 1', 'cluster-2', 'cluster-1', redisCommands, 'cmds'),
    busiest('busiest node, commands per task, cluster: 3 shards vs 1', 'cluster-3', 'cluster-1', redisCommands, 'cmds'),
    busiest('busiest node, CPU per task, cluster: 3 shards vs 1', 'cluster-3', 'cluster-1', redisCpu, 'µs'),
  ];
}

runMain(main);
