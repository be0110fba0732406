/**
 * Redis servers of our own, for tests and benchmarks that need more than the shared Redis: a
 * real Redis Cluster of three masters (`redis-server --cluster-enabled yes`) on free loopback
 * ports, joined with `redis-cli --cluster create`, or one standalone `redis-server` with the
 * same settings. Torn down by `stop()`. Free of vitest, so `bench/` runs it from plain Node.
 *
 * `cluster-require-full-coverage no`: with a master down (and no replica to fail over to) the
 * other masters keep answering for their slots, which is what a sharded app wants (README,
 * "Redis Cluster and shards").
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import type { RedisClusterConnection } from '../../src/runtime/bullmq/index.js';

export interface ClusterNodeAddress {
  readonly host: string;
  readonly port: number;
}

export interface LocalCluster {
  readonly nodes: readonly ClusterNodeAddress[];
  /** What the runtime takes as `connection`. */
  readonly connection: RedisClusterConnection;
  /** `host:port,…`, as in `REDIS_CLUSTER_NODES`. */
  readonly nodeList: string;
  /** Kills one node for good (SIGKILL; with replicas, one of its replicas takes over). */
  kill(port: number): Promise<void>;
  /** Freezes one node (SIGSTOP) or thaws it (SIGCONT): it keeps its sockets but answers nothing. */
  pause(port: number): void;
  resume(port: number): void;
  /** The master that owns `tag`'s slot. */
  masterOf(tag: string): Promise<ClusterNodeAddress>;
  /** A plain client to one node (for counting its keys). */
  client(port: number): Redis;
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

export function redisBinariesAvailable(): boolean {
  const server = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  const cli = spawnSync('redis-cli', ['--version'], { encoding: 'utf8' });
  return server.status === 0 && cli.status === 0;
}

/** How a local cluster is built beyond its masters. */
export interface LocalClusterOptions {
  /** Replicas per master (default 0), each able to take over when its master dies. */
  readonly replicas?: number;
  /** Extra `redis-server` arguments for every node, such as `--appendonly yes`. */
  readonly serverArgs?: readonly string[];
  /**
   * `cluster-node-timeout` (default 10 s, for steady pub/sub on a loaded machine); failover
   * tests set it low, since a replica takes over only after it.
   */
  readonly nodeTimeoutMs?: number;
}

export async function startLocalCluster(masters = 3, options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-cluster-'));
  const processes = new Map<number, ChildProcess>();
  const clients: Redis[] = [];
  const ports: number[] = [];
  const replicas = options.replicas ?? 0;
  try {
    for (let index = 0; index < masters * (1 + replicas); index++) ports.push(await freeClusterPort(ports));
    for (const port of ports) {
      processes.set(
        port,
        spawnRedisServer(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          // Pub/sub crosses the cluster bus, and a node drops a bus link (and the messages on
          // it) when no pong came for half this long. A second was shorter than a starved
          // process on a loaded machine stalls, and a lost record event left a waiter hanging.
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 10_000),
          '--cluster-require-full-coverage',
          'no',
          ...(options.serverArgs ?? []),
        ]),
      );
    }
    await Promise.all(ports.map((port) => untilAnswers(port)));
    const created = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `${HOST}:${port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await Promise.all(ports.map((port) => untilClusterOk(port, ports.length)));
    if (replicas > 0) await untilReplicated(ports, masters, replicas);
  } catch (error) {
    for (const child of processes.values()) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const nodes = ports.map((port) => ({ host: HOST, port }));
  return {
    nodes,
    connection: { clusterNodes: nodes },
    nodeList: nodes.map((node) => `${node.host}:${node.port}`).join(','),
    async kill(port) {
      const child = processes.get(port);
      if (!child || !isRunning(child)) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    pause(port) {
      processes.get(port)?.kill('SIGSTOP');
    },
    resume(port) {
      processes.get(port)?.kill('SIGCONT');
    },
    async masterOf(tag) {
      // Any node still alive knows the slot's owner (after a failover, the promoted replica).
      const alive = ports.find((port) => {
        const child = processes.get(port);
        return child !== undefined && isRunning(child);
      }) as number;
      const probe = new Redis(alive, HOST, { maxRetriesPerRequest: 1 });
      try {
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', `{${tag}}`));
        const ranges = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!owner) throw new Error(`no master owns slot ${slot}`);
        return { host: HOST, port: owner[2][1] };
      } finally {
        probe.disconnect();
      }
    },
    client(port) {
      const client = new Redis(port, HOST, { maxRetriesPerRequest: 1 });
      // A killed node's client retries in the background until `stop`: quietly.
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.disconnect();
      for (const child of processes.values()) child.kill('SIGCONT');
      await Promise.all([...processes.values()].map(killAndWait));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One standalone `redis-server` of our own, set up like a cluster node but without the cluster. */
export interface LocalRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startLocalRedis(): Promise<LocalRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-redis-'));
  const port = await freePort(0);
  const child = spawnRedisServer(port, dir, []);
  try {
    await untilAnswers(port);
  } catch (error) {
    await killAndWait(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `redis://${HOST}:${port}`,
    async stop() {
      await killAndWait(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A throw-away server: loopback only, no persistence, its files in `dir`. */
export function spawnRedisServer(port: number, dir: string, extra: readonly string[]): ChildProcess {
  // Files named by port: nodes share `dir`, and a replica writes an RDB when it syncs.
  const files = ['--dbfilename', `dump-${port}.rdb`, '--appenddirname', `aof-${port}`];
  const args = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    ...files,
    ...extra,
  ];
  return spawn('redis-server', args, { stdio: 'ignore' });
}

/** Not exited, by itself or by a signal. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

export function killAndWait(child: ChildProcess): Promise<unknown> {
  if (!isRunning(child)) return Promise.resolve();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  return exited;
}

/** A cluster client for checks from the test itself. */
export function clusterClient(cluster: LocalCluster): Cluster {
  return new Cluster([...cluster.nodes], { redisOptions: { maxRetriesPerRequest: 1 } });
}

/** A free port whose cluster bus port (+10000) is free too. */
async function freeClusterPort(taken: readonly number[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort(0);
    if (port > 55_000 || taken.includes(port)) continue;
    if (await portIsFree(port + 10_000)) return port;
  }
  throw new Error('found no free pair of ports for a cluster node');
}

export function freePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, HOST, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : port));
    });
  });
}

async function portIsFree(port: number): Promise<boolean> {
  try {
    await freePort(port);
    return true;
  } catch {
    return false;
  }
}

export async function untilAnswers(port: number): Promise<void> {
  const client = new Redis(port, HOST, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        if (client.status !== 'ready') await client.connect();
        if ((await client.ping()) === 'PONG') return;
      } catch {
        // Not listening yet.
      }
      await sleep(50);
    }
    throw new Error(`redis-server on port ${port} did not start`);
  } finally {
    client.disconnect();
  }
}

/**
 * Until the node says the cluster is ok and has a bus link up to each of the other `masters`:
 * before that, a message published on another node may not reach its subscribers.
 */
async function untilClusterOk(port: number, nodeCount: number): Promise<void> {
  const client = new Redis(port, HOST, { maxRetriesPerRequest: 1 });
  try {
    for (let attempt = 0; attempt < 400; attempt++) {
      const info = String(await client.call('CLUSTER', 'INFO'));
      const nodes = String(await client.call('CLUSTER', 'NODES'))
        .split('\n')
        .filter((line) => line.trim() !== '');
      const linked = nodes.filter((line) => line.includes('myself') || / connected( |$)/.test(line)).length;
      if (info.includes('cluster_state:ok') && nodes.length === nodeCount && linked === nodeCount) return;
      await sleep(50);
    }
    throw new Error(`the cluster node on port ${port} never reported cluster_state:ok with every bus link up`);
  } finally {
    client.disconnect();
  }
}

export /** Until `masters` nodes are masters with `replicas` replicas each, all synced. */
async function untilReplicated(ports: readonly number[], masters: number, replicas: number): Promise<void> {
  const probes = ports.map((port) => new Redis(port, HOST, { maxRetriesPerRequest: 1 }));
  try {
    for (let attempt = 0; attempt < 300; attempt++) {
      const infos = await Promise.all(probes.map((probe) => probe.info('replication')));
      const ready = infos.filter((info) => {
        const online = info.match(/^slave\d+:.*state=online/gm) ?? [];
        return info.includes('role:master') && online.length >= replicas;
      });
      if (ready.length === masters) return;
      await sleep(50);
    }
    throw new Error(`the cluster's ${masters} masters never had ${replicas} synced replica(s) each`);
  } finally {
    for (const probe of probes) probe.disconnect();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
