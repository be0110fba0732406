/**
 * A Redis Sentinel group of our own on free loopback ports: one primary, its replicas and a few
 * sentinels (`redis-server <conf> --sentinel`) watching it with a short `down-after-milliseconds`,
 * so a killed primary is replaced within a few seconds. Torn down by `stop()`.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { RedisSentinelConnection } from '../../src/runtime/bullmq/index.js';
import { freePort, isRunning, killAndWait, sleep, spawnRedisServer, untilAnswers } from '../support/local-redis.js';

const HOST = '127.0.0.1';

/** The group's processes and how to reach it. */
export interface LocalSentinelGroup {
  /** The monitored master's name, as in `REDIS_SENTINEL_NAME`. */
  readonly name: string;
  /** What the runtime takes as `connection`. */
  readonly connection: RedisSentinelConnection;
  /** `host:port,…` of the sentinels, as in `REDIS_SENTINELS`. */
  readonly sentinelList: string;
  /** Ports of the data nodes (the primary first, as started). */
  readonly dataPorts: readonly number[];
  /** The port the sentinels name as primary now. */
  primaryPort(): Promise<number>;
  /** Until the sentinels name a primary other than `port`, and it answers as one. */
  promotedFrom(port: number, timeoutMs?: number): Promise<number>;
  kill(port: number): Promise<void>;
  /** Freezes one data node (SIGSTOP) or thaws it (SIGCONT). */
  pause(port: number): void;
  resume(port: number): void;
  /** A plain client to one data node. */
  client(port: number): Redis;
  stop(): Promise<void>;
}

/** How a local group is built. */
export interface LocalSentinelOptions {
  /** Replicas of the primary (default 1). */
  readonly replicas?: number;
  /** Sentinels (default 3, quorum a majority of them). */
  readonly sentinels?: number;
  /** `down-after-milliseconds` (default 1000). */
  readonly downAfterMs?: number;
  /** Extra `redis-server` arguments for every data node, such as `--appendonly yes`. */
  readonly serverArgs?: readonly string[];
}

export async function startLocalSentinelGroup(options: LocalSentinelOptions = {}): Promise<LocalSentinelGroup> {
  const name = 'mcp-primary';
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sentinel-'));
  const data = new Map<number, ChildProcess>();
  const watchers: ChildProcess[] = [];
  const clients: Redis[] = [];
  const replicas = options.replicas ?? 1;
  const sentinelCount = options.sentinels ?? 3;
  const quorum = Math.floor(sentinelCount / 2) + 1;
  const taken: number[] = [];
  const nextPort = async () => {
    for (;;) {
      const port = await freePort(0);
      if (!taken.includes(port)) {
        taken.push(port);
        return port;
      }
    }
  };
  const sentinels: { host: string; port: number }[] = [];
  try {
    const primary = await nextPort();
    data.set(primary, spawnRedisServer(primary, dir, options.serverArgs ?? []));
    await untilAnswers(primary);
    for (let index = 0; index < replicas; index++) {
      const port = await nextPort();
      data.set(
        port,
        spawnRedisServer(port, dir, [...(options.serverArgs ?? []), '--replicaof', HOST, String(primary)]),
      );
      await untilAnswers(port);
    }
    await Promise.all([...data.keys()].slice(1).map((port) => untilLinkUp(port)));
    for (let index = 0; index < sentinelCount; index++) {
      const port = await nextPort();
      const config = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        config,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `dir ${dir}`,
          `sentinel monitor ${name} ${HOST} ${primary} ${quorum}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      watchers.push(spawn('redis-server', [config, '--sentinel'], { stdio: 'ignore' }));
      sentinels.push({ host: HOST, port });
    }
    await Promise.all(sentinels.map(({ port }) => untilSentinelSees(port, name, replicas, sentinelCount - 1)));
  } catch (error) {
    for (const child of [...data.values(), ...watchers]) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const askSentinels = async (): Promise<number | undefined> => {
    for (const { port } of sentinels) {
      const probe = new Redis(port, HOST, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
      probe.on('error', () => {});
      try {
        const [, master] = (await probe.call('SENTINEL', 'get-master-addr-by-name', name)) as [string, string];
        return Number(master);
      } catch {
        // This sentinel is not answering: ask the next.
      } finally {
        probe.disconnect();
      }
    }
    return undefined;
  };

  return {
    name,
    connection: { sentinels, name },
    sentinelList: sentinels.map(({ host, port }) => `${host}:${port}`).join(','),
    dataPorts: [...data.keys()],
    async primaryPort() {
      const port = await askSentinels();
      if (port === undefined) throw new Error('no sentinel answered');
      return port;
    },
    async promotedFrom(old, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const port = await askSentinels();
        if (port !== undefined && port !== old && (await roleOf(port)) === 'master') return port;
        await sleep(50);
      }
      throw new Error(`the sentinels did not promote a replica of ${old} within ${timeoutMs} ms`);
    },
    async kill(port) {
      const child = data.get(port);
      if (child && isRunning(child)) await killAndWait(child);
    },
    pause(port) {
      data.get(port)?.kill('SIGSTOP');
    },
    resume(port) {
      data.get(port)?.kill('SIGCONT');
    },
    client(port) {
      const client = new Redis(port, HOST, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.disconnect();
      for (const child of data.values()) child.kill('SIGCONT');
      await Promise.all([...data.values(), ...watchers].map(killAndWait));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function withProbe<T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(port, HOST, { maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
  client.on('error', () => {});
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

async function roleOf(port: number): Promise<string | undefined> {
  try {
    return await withProbe(port, async (client) => String(((await client.call('ROLE')) as unknown[])[0]));
  } catch {
    return undefined;
  }
}

async function untilLinkUp(port: number): Promise<void> {
  await withProbe(port, async (client) => {
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await client.info('replication')).includes('master_link_status:up')) return;
      await sleep(50);
    }
    throw new Error(`the replica on port ${port} never synced with its primary`);
  });
}

/** Until a sentinel knows the primary's replicas and the other sentinels (they find each other by hello messages). */
async function untilSentinelSees(port: number, name: string, replicas: number, others: number): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const seen = await withProbe(port, async (client) => {
        const known = (await client.call('SENTINEL', 'replicas', name)) as unknown[];
        const peers = (await client.call('SENTINEL', 'sentinels', name)) as unknown[];
        return known.length >= replicas && peers.length >= others;
      });
      if (seen) return;
    } catch {
      // Not listening yet.
    }
    await sleep(50);
  }
  throw new Error(`sentinel ${port} never saw ${replicas} replica(s) and ${others} other sentinel(s)`);
}
