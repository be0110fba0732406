/**
 * Worker processes: run the tasks of an app on the BullMQ runtime, next to any number of server
 * processes that share its Redis.
 */
import { type RedisConnection, runWorkersUntilSignal, TaskWorker } from '../runtime/bullmq/index.js';
import type { TaskManifest } from '../tools/definition.js';
import { createConsoleLogger, type Logger } from '../tools/logger.js';
import { ToolRegistry } from '../tools/registry.js';
import { limitsFromEnvironment } from './limits.js';
import { DEFAULT_WORKER_CONCURRENCY, type RedisSetup, redisFromEnvironment, redisSetup } from './runtime-choice.js';

export interface TaskWorkerProcessOptions {
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes, as the server gets them. */
  readonly instances: readonly object[];
  readonly redis: RedisConnection | RedisSetup;
  /** Tasks this process runs at once (default 8). */
  readonly concurrency?: number;
  /** Largest result a task may store (default 4 MiB, or `MCP_TASK_MAX_RESULT_BYTES`); a bigger one fails the task. */
  readonly maxResultBytes?: number;
  readonly logger?: Logger;
}

export function createTaskWorker(options: TaskWorkerProcessOptions): TaskWorker {
  const logger = options.logger ?? createConsoleLogger();
  const setup = redisSetup(options.redis);
  const maxResultBytes = options.maxResultBytes ?? limitsFromEnvironment().maxResultBytes;
  const registry = new ToolRegistry({
    manifest: options.manifest,
    instances: options.instances,
    logger,
    ...(maxResultBytes !== undefined && { maxResultBytes }),
  });
  return new TaskWorker({
    ...setup.worker,
    executor: registry,
    connection: setup.connection,
    ...(setup.prefix !== undefined && { prefix: setup.prefix }),
    ...(setup.queue !== undefined && { queue: setup.queue }),
    concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
    logger,
  });
}

export type RunWorkersOptions = Omit<TaskWorkerProcessOptions, 'redis'> & {
  /** Default: `REDIS_URL`. */
  readonly redis?: RedisConnection | RedisSetup;
};

/**
 * The entry point of a worker process: Redis from `REDIS_URL` (and `REDIS_PREFIX`), concurrency from `WORKERS`
 * unless given, runs until SIGTERM/SIGINT, then lets running tasks finish within the grace
 * period and hands the rest back to the queue.
 */
export async function runTaskWorkers(options: RunWorkersOptions): Promise<TaskWorker> {
  const redis = options.redis ?? redisFromEnvironment();
  if (!redis) throw new Error('Worker processes need Redis: set REDIS_URL (for example redis://127.0.0.1:6379)');
  const concurrency = options.concurrency ?? (process.env.WORKERS ? Number(process.env.WORKERS) : undefined);
  const logger = options.logger ?? createConsoleLogger();
  const worker = createTaskWorker({ ...options, redis, logger, ...(concurrency !== undefined && { concurrency }) });
  void runWorkersUntilSignal([worker], { onSignal: (signal) => logger.info(`${signal} received, stopping workers`) });
  await worker.started;
  // stdout, so scripts can wait for this line.
  process.stdout.write(
    `MCP task worker running ${concurrency ?? DEFAULT_WORKER_CONCURRENCY} tasks at once on queue ${worker.names.queue}\n`,
  );
  return worker;
}
