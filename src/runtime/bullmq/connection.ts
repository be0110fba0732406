/**
 * Redis connections for the BullMQ runtime. Each role gets its own ioredis client because the
 * roles want opposite failure behaviour:
 *
 * - `request`: answers a client's create/get/list/cancel. It must fail fast when Redis is away
 *   (no offline queue, no resend after a reconnect), so a request gets RUNTIME_UNAVAILABLE in
 *   seconds instead of hanging, and a command that timed out can never run later behind the
 *   caller's back.
 * - `worker`: BullMQ's Worker (it duplicates it for its blocking BZPOPMIN) and the worker's
 *   record writes. BullMQ requires `maxRetriesPerRequest: null`; a worker waits out an outage.
 * - `subscriber`: pub/sub only (a subscribed connection can run nothing else). It must survive
 *   outages and re-subscribe by itself, so it queues and retries too.
 */
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { TaskError } from '../../engine/errors.js';
import type { Logger } from '../../observe/logger.js';
import { ioredisLibrary } from './libraries.js';

/**
 * Redis Cluster: the start-up nodes (`host:port` or `{ host, port }`; any few masters do, the
 * client discovers the rest) and ioredis cluster options (`redisOptions` apply to every node).
 */
export interface RedisClusterConnection {
  readonly clusterNodes: readonly (string | { readonly host: string; readonly port: number })[];
  readonly clusterOptions?: ClusterOptions;
}

/**
 * Redis Sentinel: the sentinels to ask (any one that answers will do) and the name of the
 * primary they watch (`sentinel monitor <name> …`). Every connection asks a sentinel for the
 * current primary whenever it (re)connects, so after a failover it finds the promoted replica by
 * itself. `redisOptions` apply to the data nodes and, for `sentinelPassword`, `sentinelTLS` and
 * the like, to the sentinels (ioredis options).
 */
export interface RedisSentinelConnection {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  readonly name: string;
  readonly redisOptions?: Omit<RedisOptions, 'sentinels' | 'name'>;
}

/**
 * Where Redis is: a `redis://` / `rediss://` URL, ioredis options (host, port, db, tls, …), the
 * nodes of a Redis Cluster, or the sentinels that watch a primary and its replicas.
 */
export type RedisConnection = string | RedisOptions | RedisClusterConnection | RedisSentinelConnection;

/** A connection to a single Redis or to a Redis Cluster; both take the same commands. */
export type RedisClient = Redis | Cluster;

/** Whether `connection` names Redis Cluster nodes. */
export function isClusterConnection(connection: RedisConnection): connection is RedisClusterConnection {
  return typeof connection === 'object' && 'clusterNodes' in connection;
}

/** Whether `connection` names sentinels (our shape, or ioredis options with `sentinels`). */
export function isSentinelConnection(connection: RedisConnection): connection is RedisSentinelConnection {
  return (
    typeof connection === 'object' &&
    'sentinels' in connection &&
    Array.isArray(connection.sentinels) &&
    connection.sentinels.length > 0
  );
}

/** `host:port,host:port` (as in `REDIS_CLUSTER_NODES`) as cluster start-up nodes; throws naming a bad entry. */
export function parseClusterNodes(list: string): RedisClusterConnection {
  return { clusterNodes: parseHostPorts(list, 'REDIS_CLUSTER_NODES') };
}

/**
 * `host:port,host:port` (as in `REDIS_SENTINELS`) and the watched primary's name (as in
 * `REDIS_SENTINEL_NAME`) as a Sentinel connection; throws naming a bad entry.
 */
export function parseSentinels(list: string, name: string): RedisSentinelConnection {
  if (name.trim() === '' || /\s/.test(name.trim()))
    throw new Error('REDIS_SENTINEL_NAME must be a name without spaces');
  return { sentinels: parseHostPorts(list, 'REDIS_SENTINELS'), name: name.trim() };
}

function parseHostPorts(list: string, variable: string): { host: string; port: number }[] {
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error(`${variable} names no node: expected host:port,host:port,…`);
  return entries.map((entry) => {
    const match = /^(.+):(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65_535) {
      throw new Error(`${variable}: ${JSON.stringify(entry)} is not host:port`);
    }
    return { host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port };
  });
}

export type ConnectionRole = 'request' | 'worker' | 'subscriber';

/** Reconnect forever with a short capped back-off: outages end, and callers have their own deadlines. */
function retryStrategy(times: number): number {
  return Math.min(100 * 2 ** Math.min(times, 5), 2000);
}

const ROLE_OPTIONS: Readonly<Record<ConnectionRole, RedisOptions>> = {
  request: {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
  },
  worker: { maxRetriesPerRequest: null },
  subscriber: { maxRetriesPerRequest: null },
};

export function createRedisClient(
  connection: RedisConnection,
  role: ConnectionRole,
  logger: Logger,
  name: string,
): RedisClient {
  // The app's own options (tls, db, a retry strategy…) win over our defaults; the role's
  // failure behaviour wins over both, because the runtime's guarantees depend on it.
  const defaults: RedisOptions = { retryStrategy, connectionName: name };
  let client: RedisClient;
  if (isClusterConnection(connection)) {
    client = createClusterClient(connection, role, name);
  } else if (isSentinelConnection(connection)) {
    client = createSentinelClient(connection, role, defaults);
  } else if (typeof connection === 'string') {
    client = new (ioredisLibrary().Redis)(connection, { ...defaults, ...ROLE_OPTIONS[role] });
  } else {
    client = new (ioredisLibrary().Redis)({ ...defaults, ...connection, ...ROLE_OPTIONS[role] });
  }
  reportErrorsOncePerOutage(client, logger, name);
  return client;
}

/**
 * Reconnects through Sentinel back off less: each attempt asks a sentinel where the primary is
 * (cheap), and the attempt after the promotion is the one that restores service.
 */
function sentinelRetryStrategy(times: number): number {
  return Math.min(50 * times, 500);
}

/**
 * A primary found through Sentinel. On top of the role's options:
 *
 * - reconnects at most 500 ms apart (`sentinelRetryStrategy`);
 * - `failoverDetector`: the client also listens to the sentinels' `+switch-master` and leaves
 *   the old primary as soon as they promote a replica, instead of when its socket breaks (a
 *   primary cut off by a partition may never close it);
 * - `reconnectOnError` on `READONLY`: an old primary that came back as a replica refuses
 *   writes; reconnecting asks the sentinels again. The refused command did not run, so worker
 *   and subscriber connections resend it; a request fails and its caller retries.
 * - a `sentinelCommandTimeout`, so a sentinel that hangs is skipped for the next one.
 */
function createSentinelClient(
  connection: RedisSentinelConnection,
  role: ConnectionRole,
  defaults: RedisOptions,
): Redis {
  const options = 'redisOptions' in connection ? connection.redisOptions : (connection as RedisOptions);
  return new (ioredisLibrary().Redis)({
    ...defaults,
    retryStrategy: sentinelRetryStrategy,
    failoverDetector: true,
    sentinelCommandTimeout: 1000,
    reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? (role === 'request' ? 1 : 2) : false),
    ...options,
    sentinels: connection.sentinels.map(({ host, port }) => ({ host, port })),
    name: connection.name,
    ...ROLE_OPTIONS[role],
  });
}

/**
 * The cluster client keeps one connection per node. The role's options apply to each of them;
 * the offline queue is a cluster-level option. A request that meets a node that is down fails
 * (after the node's connect timeout at worst) instead of waiting for the node: with no replica
 * to fail over to, only that node's shards are unavailable, and the others keep serving.
 */
function createClusterClient(connection: RedisClusterConnection, role: ConnectionRole, name: string): Cluster {
  const { enableOfflineQueue: _offline, retryStrategy: _retry, ...roleOptions } = ROLE_OPTIONS[role];
  const options = connection.clusterOptions ?? {};
  return new (ioredisLibrary().Cluster)(
    connection.clusterNodes.map((node) => (typeof node === 'string' ? node : { host: node.host, port: node.port })),
    {
      clusterRetryStrategy: retryStrategy,
      ...options,
      // Replicas lag their master: a read there could miss the write just acknowledged.
      scaleReads: 'master',
      enableOfflineQueue: ROLE_OPTIONS[role].enableOfflineQueue ?? true,
      redisOptions: { connectionName: name, ...options.redisOptions, ...roleOptions },
    },
  );
}

/**
 * ioredis emits `error` on every failed reconnect attempt (several a second) and prints an
 * "Unhandled error event" if nobody listens. Log the first error of an outage and stay quiet
 * until the connection is ready again.
 */
function reportErrorsOncePerOutage(client: RedisClient, logger: Logger, name: string): void {
  let reported = false;
  client.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    logger.warn(`Redis connection ${name} failed; retrying in the background`, { error: error.message });
  });
  client.on('ready', () => {
    if (reported) logger.info(`Redis connection ${name} is back`);
    reported = false;
  });
}

/**
 * Operations waiting for each client that is not ready yet. They share one `ready` listener:
 * a listener each would trip Node's leak warning under the first burst of requests.
 */
const readyWaiters = new WeakMap<RedisClient, Set<() => void>>();

/** Resolves once `client` can take commands; rejects when `signal` aborts first. */
export function whenReady(client: RedisClient, signal: AbortSignal): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  signal.throwIfAborted();
  let waiters = readyWaiters.get(client);
  if (!waiters) {
    const woken = new Set<() => void>();
    readyWaiters.set(client, woken);
    client.once('ready', () => {
      readyWaiters.delete(client);
      for (const wake of woken) wake();
    });
    waiters = woken;
  }
  const waiting = waiters;
  return new Promise((resolve, reject) => {
    const wake = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    // A waiter whose deadline passed leaves nothing behind, however long Redis stays away.
    const onAbort = () => {
      waiting.delete(wake);
      reject(signal.reason);
    };
    waiting.add(wake);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs one runtime operation under a deadline. When Redis is unreachable or does not answer in
 * time the caller gets RUNTIME_UNAVAILABLE; the operation sees its signal abort and must stop at
 * its next step (see `BullmqTaskRuntime.create`) rather than finish later unobserved.
 */
export async function withDeadline<T>(
  what: string,
  timeoutMs: number,
  operation: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Built only when needed: an Error's stack trace costs more than the operation it guards.
      const unavailable = new TaskError(
        'RUNTIME_UNAVAILABLE',
        `The task store (Redis) did not answer within ${timeoutMs} ms while trying to ${what}`,
      );
      controller.abort(unavailable);
      reject(unavailable);
    }, timeoutMs);
  });
  const work = operation(controller.signal);
  // The loser of the race must not surface as an unhandled rejection.
  work.catch(() => {});
  try {
    return await Promise.race([work, deadline]);
  } catch (error) {
    throw asUnavailable(error, what);
  } finally {
    clearTimeout(timer);
  }
}

/** Engine errors pass through; anything Redis threw becomes RUNTIME_UNAVAILABLE. */
export function asUnavailable(error: unknown, what: string): TaskError {
  if (error instanceof TaskError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TaskError('RUNTIME_UNAVAILABLE', `The task store (Redis) failed while trying to ${what}: ${message}`, {
    cause: error,
  });
}

/**
 * PING: on a cluster, every master is asked and the first answer wins, so one lost master
 * (which costs its own shards only) never makes a process look unready.
 */
export async function pingAnyMaster(client: RedisClient): Promise<void> {
  const masters = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [];
  if (masters.length === 0) await client.ping();
  else await Promise.any(masters.map((node) => node.ping()));
}

/** Closes a client politely, or drops it if Redis is not there to say goodbye to. */
export async function closeClient(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
