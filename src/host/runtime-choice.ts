/**
 * Which runtime a process uses: BullMQ on Redis when Redis is configured (durable, any number
 * of processes), else the in-process runtime (the embedded default).
 */
import type { TaskObserver } from '../engine/lifecycle.js';
import type { TaskExecutor, TaskRuntime } from '../engine/runtime.js';
import type { Logger } from '../observe/logger.js';
import {
  BullmqTaskRuntime,
  type CreateDurability,
  type JobRetryOptions,
  type RedisConnection,
  type TaskWorkerSettings,
} from '../runtime/bullmq/index.js';
import { MemoryTaskRuntime } from '../runtime/memory/memory-runtime.js';

/** Where the BullMQ runtime keeps its state; every server and worker process of an app shares it. */
export interface RedisSetup {
  readonly connection: RedisConnection;
  /** Key prefix (default `mcp`). */
  readonly prefix?: string;
  /** Queue name (default `tasks`). */
  readonly queue?: string;
  /**
   * Queues the tasks are spread over, each in its own Redis Cluster slot (default 1); the same
   * in every server and worker process of the app.
   */
  readonly shards?: number;
  /** Attempts after infrastructure failures, such as a worker lost mid-job. */
  readonly retry?: JobRetryOptions;
  /**
   * How long a lease on a capped slot (session, listen stream, blocking wait) lasts unless its
   * process renews it (default 30 000 ms; `MCP_TASK_SLOT_LEASE_MS`): the slots of a server
   * process that dies come back within it.
   */
  readonly slotLeaseMs?: number;
  /**
   * When a create is acknowledged (default `'primary'`); `'replicated'` waits until a replica
   * has the task too (see `BullmqRuntimeOptions.durability`).
   */
  readonly durability?: CreateDurability;
  /** Lock, stall and shutdown timings of the workers in this process. */
  readonly worker?: Omit<TaskWorkerSettings, 'executor' | 'concurrency' | 'logger'>;
}

/**
 * Which runtime `createTaskServer` builds when no `runtime` is given: BullMQ on `redis` when it
 * is set, else the in-process runtime; and how many tasks this process runs at once.
 */
export interface RuntimeChoice {
  readonly redis?: RedisConnection | RedisSetup;
  /**
   * Tasks this process runs at once (default 8); the rest wait, `working` with the message
   * `queued`. With Redis, `0` leaves all work to worker processes.
   */
  readonly workers?: number;
}

export const DEFAULT_WORKER_CONCURRENCY = 8;

export function redisSetup(redis: RedisConnection | RedisSetup): RedisSetup {
  return typeof redis === 'object' && 'connection' in redis ? redis : { connection: redis };
}

export function chooseRuntime(
  choice: RuntimeChoice,
  executor: TaskExecutor,
  logger: Logger,
  observer?: TaskObserver,
  clock?: () => number,
  clockAdvances?: (listener: () => void) => () => void,
): TaskRuntime {
  if (choice.workers !== undefined && (!Number.isInteger(choice.workers) || choice.workers < 0)) {
    throw new RangeError(`workers must be a whole number of 0 or more, got ${choice.workers}`);
  }
  if (!choice.redis) {
    if (choice.workers === 0) {
      throw new RangeError('workers: 0 leaves tasks to worker processes, which needs Redis (set REDIS_URL or `redis`)');
    }
    return new MemoryTaskRuntime({
      executor,
      concurrency: choice.workers ?? DEFAULT_WORKER_CONCURRENCY,
      ...(observer && { observer }),
      ...(clock && { clock }),
      ...(clockAdvances && { clockAdvances }),
    });
  }
  const setup = redisSetup(choice.redis);
  const concurrency = choice.workers ?? DEFAULT_WORKER_CONCURRENCY;
  return new BullmqTaskRuntime({
    connection: setup.connection,
    ...(setup.prefix !== undefined && { prefix: setup.prefix }),
    ...(setup.queue !== undefined && { queue: setup.queue }),
    ...(setup.shards !== undefined && { shards: setup.shards }),
    ...(setup.retry && { retry: setup.retry }),
    ...(setup.slotLeaseMs !== undefined && { slotLeaseMs: setup.slotLeaseMs }),
    ...(setup.durability !== undefined && { durability: setup.durability }),
    ...(concurrency > 0 && { worker: { ...setup.worker, executor, concurrency, logger } }),
    logger,
  });
}

/** What the start-up log says about durability, so nobody mistakes the embedded runtime for a durable one. */
export function describeRuntime(runtime: TaskRuntime, workers: number | undefined): string {
  if (runtime.kind === 'memory') {
    return `task runtime: in-process, ${workers ?? DEFAULT_WORKER_CONCURRENCY} tasks at once (tasks are lost when this process stops; set REDIS_URL for durable tasks)`;
  }
  const work =
    workers === 0
      ? 'no workers in this process: start worker processes to run tasks'
      : `${workers ?? DEFAULT_WORKER_CONCURRENCY} tasks at once in this process`;
  return `task runtime: ${runtime.kind} on Redis (tasks survive restarts; ${work})`;
}

/** `REDIS_URL`, with `REDIS_PREFIX` as the key prefix when set; `undefined` without `REDIS_URL`. */
export function redisFromEnvironment(env: NodeJS.ProcessEnv = process.env): RedisSetup | undefined {
  if (!env.REDIS_URL) return undefined;
  return { connection: env.REDIS_URL, ...(env.REDIS_PREFIX && { prefix: env.REDIS_PREFIX }) };
}
