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
  /** Kills one master for good (SIGKILL, no failover: the cluster has no replicas). */
  kill(port: number): Promise<void>;
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

export async function startLocalCluster(masters = 3): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-cluster-'));
  const processes = new Map<number, ChildProcess>();
  const clients: Redis[] = [];
  const ports: number[] = [];
  try {
    for (let index = 0; index < masters; index++) ports.push(await freeClusterPort(ports));
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
          '10000',
          '--cluster-require-full-coverage',
          'no',
        ]),
      );
    }
    await Promise.all(ports.map((port) => untilAnswers(port)));
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((port) => `${HOST}:${port}`), '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await Promise.all(ports.map((port) => untilClusterOk(port, masters)));
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
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async masterOf(tag) {
      const probe = new Redis(ports[0] as number, HOST, { maxRetriesPerRequest: 1 });
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
function spawnRedisServer(port: number, dir: string, extra: readonly string[]): ChildProcess {
  const args = ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, ...extra];
  return spawn('redis-server', args, { stdio: 'ignore' });
}

function killAndWait(child: ChildProcess): Promise<unknown> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
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

function freePort(port: number): Promise<number> {
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

async function untilAnswers(port: number): Promise<void> {
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
async function untilClusterOk(port: number, masters: number): Promise<void> {
  const client = new Redis(port, HOST, { maxRetriesPerRequest: 1 });
  try {
    for (let attempt = 0; attempt < 400; attempt++) {
      const info = String(await client.call('CLUSTER', 'INFO'));
      const nodes = String(await client.call('CLUSTER', 'NODES'))
        .split('\n')
        .filter((line) => line.trim() !== '');
      const linked = nodes.filter((line) => line.includes('myself') || / connected( |$)/.test(line)).length;
      if (info.includes('cluster_state:ok') && nodes.length === masters && linked === masters) return;
      await sleep(50);
    }
    throw new Error(`the cluster node on port ${port} never reported cluster_state:ok with every bus link up`);
  } finally {
    client.disconnect();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
