/**
 * The environment a server or worker process reads, read once at start-up and checked before
 * anything starts. A bad value is a `ConfigError` whose one-line message names the variable,
 * what it holds and what it accepts; `runTaskServer` and `runTaskWorkers` print that line and
 * exit with status 2 instead of crashing later with a stack trace from deep inside a library.
 */
import {
  type CreateDurability,
  MAX_SHARDS,
  parseClusterNodes,
  parseSentinels,
  type RedisConnection,
  type TaskWorkerSettings,
} from '../runtime/bullmq/index.js';
import { checkPublicUrl } from '../tools/registry.js';
import type { RedisSetup } from './runtime-choice.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    value: string,
    accepts: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is not valid: ${variable} must be ${accepts}`);
  }
}

/** Worker timings an operator may tune (the same in every process of an app: docs/design/bullmq.md §2). */
export type WorkerTimings = Pick<
  TaskWorkerSettings,
  'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount' | 'shutdownGraceMs' | 'inputGraceMs' | 'versionWaitMs'
>;

export interface ProcessConfig {
  /**
   * From `REDIS_URL`, `REDIS_CLUSTER_NODES` or `REDIS_SENTINELS` (with `REDIS_SENTINEL_NAME`),
   * `REDIS_PREFIX`, `TASK_SHARDS` and `REDIS_DURABILITY`, with the worker timings and
   * `TASK_WORKER_SHARDS`; absent without one of the first three.
   */
  readonly redis?: RedisSetup;
  /** `WORKERS`: tasks this process runs at once. */
  readonly workers?: number;
  /** `PORT` and `HOST`: where the HTTP server listens. */
  readonly port?: number;
  readonly host?: string;
  readonly workerTimings: WorkerTimings;
  /** `HEALTH_PORT` and `HEALTH_HOST`: where a worker process serves its health routes. */
  readonly healthPort?: number;
  readonly healthHost?: string;
  /** `MCP_REQUEST_STATE_KEY`: seals a 2026 call's state between rounds (see `requestStateKey`). */
  readonly requestStateKey?: string;
  /**
   * `MCP_TASK_UNAWARE_CLIENTS` and `MCP_TASK_UNAWARE_GRACE_MS`: what callers that cannot receive
   * a task get (see `TaskServerOptions.unawareClients`).
   */
  readonly unawareClients?: { readonly mode?: 'auto' | 'handle' | 'inline'; readonly graceMs?: number };
}

/** The variables, for the README and for error messages: name → what it accepts. */
export const CONFIG_VARIABLES = {
  REDIS_URL: 'a redis:// or rediss:// URL, such as redis://127.0.0.1:6379',
  REDIS_CLUSTER_NODES: 'host:port of Redis Cluster nodes separated by commas (and REDIS_URL unset)',
  REDIS_SENTINELS:
    'host:port of Redis Sentinels separated by commas, with REDIS_SENTINEL_NAME set (and REDIS_URL, REDIS_CLUSTER_NODES unset)',
  REDIS_SENTINEL_NAME:
    'the name the sentinels monitor the primary under (sentinel monitor <name> …), with REDIS_SENTINELS',
  REDIS_DURABILITY: 'primary or replicated (acknowledge a create once a replica has it too)',
  REDIS_PREFIX: 'a key prefix of 1 to 100 characters without spaces or braces',
  TASK_SHARDS: `a whole number from 1 to ${MAX_SHARDS}, the same in every process`,
  TASK_WORKER_SHARDS: 'shard numbers separated by commas, each below TASK_SHARDS, such as 0,2',
  WORKERS: 'a whole number of 0 or more (0: this server runs no tasks)',
  PORT: 'a whole number from 0 to 65535',
  HOST: 'a host name or IP address',
  MCP_TASK_LOG_LEVEL: 'one of debug, info, warn, error, silent',
  WORKER_LOCK_MS: 'a whole number of milliseconds from 1000 to 600000',
  WORKER_STALLED_INTERVAL_MS: 'a whole number of milliseconds from 500 to 600000',
  WORKER_MAX_STALLED: 'a whole number from 0 to 100',
  WORKER_SHUTDOWN_GRACE_MS: 'a whole number of milliseconds from 0 to 3600000',
  MCP_TASK_LOG_FORMAT: 'json or pretty (default: pretty only in a terminal)',
  MCP_TASK_METRICS: '1, true, 0 or false',
  MCP_TASK_METRICS_TOKEN: 'a bearer token of 16 to 4096 characters without spaces',
  MCP_TASK_DASHBOARD: '1, true, 0 or false',
  HEALTH_PORT: 'a whole number from 0 to 65535',
  HEALTH_HOST: 'a host name or IP address',
  WORKER_INPUT_GRACE_MS: 'a whole number of milliseconds from 0 to 600000',
  MCP_TASK_VERSION_WAIT_MS: 'a whole number of milliseconds from 1 to 604800000',
  MCP_TASK_SLOT_LEASE_MS: 'a whole number of milliseconds from 1000 to 600000',
  MCP_REQUEST_STATE_KEY: 'a secret of at least 32 characters, the same in every server process',
  MCP_TASK_UNAWARE_CLIENTS: 'one of auto, handle, inline',
  MCP_TASK_UNAWARE_GRACE_MS: 'a whole number of milliseconds from 0 to 50000',
  MCP_TASK_PUBLIC_URL: 'an http:// or https:// URL without query or fragment, where callers reach the server',
} as const;

type Variable = keyof typeof CONFIG_VARIABLES;

/** Reads and checks every variable; throws `ConfigError` for the first bad one. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  const value = (name: Variable): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
  };
  const whole = (name: Variable, min: number, max: number): number | undefined => {
    const raw = value(name);
    if (raw === undefined) return undefined;
    const parsed = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new ConfigError(name, raw, CONFIG_VARIABLES[name]);
    }
    return parsed;
  };

  const level = value('MCP_TASK_LOG_LEVEL');
  if (level !== undefined && !['debug', 'info', 'warn', 'error', 'silent'].includes(level)) {
    throw new ConfigError('MCP_TASK_LOG_LEVEL', level, CONFIG_VARIABLES.MCP_TASK_LOG_LEVEL);
  }
  const url = value('REDIS_URL');
  if (url !== undefined && !isRedisUrl(url)) throw new ConfigError('REDIS_URL', url, CONFIG_VARIABLES.REDIS_URL);
  const clusterNodes = value('REDIS_CLUSTER_NODES');
  let cluster: ReturnType<typeof parseClusterNodes> | undefined;
  if (clusterNodes !== undefined) {
    if (url !== undefined) {
      throw new ConfigError('REDIS_CLUSTER_NODES', clusterNodes, CONFIG_VARIABLES.REDIS_CLUSTER_NODES);
    }
    try {
      cluster = parseClusterNodes(clusterNodes);
    } catch {
      throw new ConfigError('REDIS_CLUSTER_NODES', clusterNodes, CONFIG_VARIABLES.REDIS_CLUSTER_NODES);
    }
  }
  const sentinelList = value('REDIS_SENTINELS');
  const sentinelName = value('REDIS_SENTINEL_NAME');
  let sentinels: ReturnType<typeof parseSentinels> | undefined;
  if (sentinelList !== undefined) {
    if (url !== undefined || clusterNodes !== undefined) {
      throw new ConfigError('REDIS_SENTINELS', sentinelList, CONFIG_VARIABLES.REDIS_SENTINELS);
    }
    if (sentinelName === undefined) {
      throw new ConfigError('REDIS_SENTINEL_NAME', '', CONFIG_VARIABLES.REDIS_SENTINEL_NAME);
    }
    try {
      sentinels = parseSentinels(sentinelList, sentinelName);
    } catch (error) {
      const badName = error instanceof Error && error.message.startsWith('REDIS_SENTINEL_NAME');
      if (badName) throw new ConfigError('REDIS_SENTINEL_NAME', sentinelName, CONFIG_VARIABLES.REDIS_SENTINEL_NAME);
      throw new ConfigError('REDIS_SENTINELS', sentinelList, CONFIG_VARIABLES.REDIS_SENTINELS);
    }
  } else if (sentinelName !== undefined) {
    throw new ConfigError('REDIS_SENTINEL_NAME', sentinelName, CONFIG_VARIABLES.REDIS_SENTINEL_NAME);
  }
  const durability = value('REDIS_DURABILITY');
  if (durability !== undefined && durability !== 'primary' && durability !== 'replicated') {
    throw new ConfigError('REDIS_DURABILITY', durability, CONFIG_VARIABLES.REDIS_DURABILITY);
  }
  const shards = whole('TASK_SHARDS', 1, MAX_SHARDS);
  const workerShards = value('TASK_WORKER_SHARDS');
  let consumeShards: number[] | undefined;
  if (workerShards !== undefined) {
    consumeShards = workerShards.split(',').map((entry) => (/^\d+$/.test(entry.trim()) ? Number(entry) : -1));
    if (consumeShards.some((index) => index < 0 || index >= (shards ?? 1))) {
      throw new ConfigError('TASK_WORKER_SHARDS', workerShards, CONFIG_VARIABLES.TASK_WORKER_SHARDS);
    }
  }
  const prefix = value('REDIS_PREFIX');
  if (prefix !== undefined && (prefix.length > 100 || /[\s{}]/.test(prefix))) {
    throw new ConfigError('REDIS_PREFIX', prefix, CONFIG_VARIABLES.REDIS_PREFIX);
  }
  const host = value('HOST');
  if (host !== undefined && /\s/.test(host)) throw new ConfigError('HOST', host, CONFIG_VARIABLES.HOST);
  const format = value('MCP_TASK_LOG_FORMAT');
  if (format !== undefined && format !== 'json' && format !== 'pretty') {
    throw new ConfigError('MCP_TASK_LOG_FORMAT', format, CONFIG_VARIABLES.MCP_TASK_LOG_FORMAT);
  }
  for (const flag of ['MCP_TASK_METRICS', 'MCP_TASK_DASHBOARD'] as const) {
    const raw = value(flag);
    if (raw !== undefined && !['1', 'true', '0', 'false'].includes(raw)) {
      throw new ConfigError(flag, raw, CONFIG_VARIABLES[flag]);
    }
  }
  const token = value('MCP_TASK_METRICS_TOKEN');
  if (token !== undefined && (token.length < 16 || token.length > 4096 || /\s/.test(token))) {
    throw new ConfigError('MCP_TASK_METRICS_TOKEN', '(hidden)', CONFIG_VARIABLES.MCP_TASK_METRICS_TOKEN);
  }
  const healthPort = whole('HEALTH_PORT', 0, 65_535);
  const healthHost = value('HEALTH_HOST');
  if (healthHost !== undefined && /\s/.test(healthHost)) {
    throw new ConfigError('HEALTH_HOST', healthHost, CONFIG_VARIABLES.HEALTH_HOST);
  }
  const requestStateKey = value('MCP_REQUEST_STATE_KEY');
  if (requestStateKey !== undefined && Buffer.byteLength(requestStateKey) < 32) {
    // The value is a secret: the message names the variable and the rule, never the value.
    throw new ConfigError('MCP_REQUEST_STATE_KEY', '(hidden)', CONFIG_VARIABLES.MCP_REQUEST_STATE_KEY);
  }
  const unawareMode = value('MCP_TASK_UNAWARE_CLIENTS');
  if (unawareMode !== undefined && unawareMode !== 'auto' && unawareMode !== 'handle' && unawareMode !== 'inline') {
    throw new ConfigError('MCP_TASK_UNAWARE_CLIENTS', unawareMode, CONFIG_VARIABLES.MCP_TASK_UNAWARE_CLIENTS);
  }
  const graceMs = whole('MCP_TASK_UNAWARE_GRACE_MS', 0, 50_000);
  const unawareClients = {
    ...(unawareMode !== undefined && { mode: unawareMode as 'auto' | 'handle' | 'inline' }),
    ...(graceMs !== undefined && { graceMs }),
  };
  const publicUrl = value('MCP_TASK_PUBLIC_URL');
  if (publicUrl !== undefined) {
    try {
      checkPublicUrl(publicUrl);
    } catch {
      throw new ConfigError('MCP_TASK_PUBLIC_URL', publicUrl, CONFIG_VARIABLES.MCP_TASK_PUBLIC_URL);
    }
  }
  const workers = whole('WORKERS', 0, 10_000);
  const port = whole('PORT', 0, 65_535);
  const lockDurationMs = whole('WORKER_LOCK_MS', 1000, 600_000);
  const stalledIntervalMs = whole('WORKER_STALLED_INTERVAL_MS', 500, 600_000);
  const maxStalledCount = whole('WORKER_MAX_STALLED', 0, 100);
  const shutdownGraceMs = whole('WORKER_SHUTDOWN_GRACE_MS', 0, 3_600_000);
  const inputGraceMs = whole('WORKER_INPUT_GRACE_MS', 0, 600_000);
  const versionWaitMs = whole('MCP_TASK_VERSION_WAIT_MS', 1, 7 * 24 * 3_600_000);
  const slotLeaseMs = whole('MCP_TASK_SLOT_LEASE_MS', 1000, 600_000);
  const workerTimings: WorkerTimings = {
    ...(lockDurationMs !== undefined && { lockDurationMs }),
    ...(stalledIntervalMs !== undefined && { stalledIntervalMs }),
    ...(maxStalledCount !== undefined && { maxStalledCount }),
    ...(shutdownGraceMs !== undefined && { shutdownGraceMs }),
    ...(inputGraceMs !== undefined && { inputGraceMs }),
    ...(versionWaitMs !== undefined && { versionWaitMs }),
  };
  const connection: RedisConnection | undefined = cluster ?? sentinels ?? url;
  const worker = { ...workerTimings, ...(consumeShards && { consumeShards }) };
  return {
    ...(connection !== undefined && {
      redis: {
        connection,
        ...(prefix !== undefined && { prefix }),
        ...(shards !== undefined && { shards }),
        ...(slotLeaseMs !== undefined && { slotLeaseMs }),
        ...(durability !== undefined && { durability: durability as CreateDurability }),
        ...(Object.keys(worker).length > 0 && { worker }),
      },
    }),
    ...(workers !== undefined && { workers }),
    ...(port !== undefined && { port }),
    ...(host !== undefined && { host }),
    workerTimings,
    ...(healthPort !== undefined && { healthPort }),
    ...(healthHost !== undefined && { healthHost }),
    ...(requestStateKey !== undefined && { requestStateKey }),
    ...(Object.keys(unawareClients).length > 0 && { unawareClients }),
  };
}

function isRedisUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Reads the configuration, or ends the process with the one line that says what is wrong
 * (exit status 2, the usual status for a usage error).
 */
export function readConfigOrExit(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  try {
    return readConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
}
