/**
 * Worker processes: run the tasks of an app on the BullMQ runtime, next to any number of server
 * processes that share its Redis.
 */
import { type RedisConnection, runWorkersUntilSignal, TaskWorker } from '../runtime/bullmq/index.js';
import type { TaskManifest } from '../tools/definition.js';
import { createConsoleLogger, type Logger } from '../tools/logger.js';
import { ToolRegistry } from '../tools/registry.js';
import { CONFIG_VARIABLES, readConfigOrExit } from './config.js';
import { DEFAULT_WORKER_CONCURRENCY, type RedisSetup, redisSetup } from './runtime-choice.js';

export interface TaskWorkerProcessOptions {
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes, as the server gets them. */
  readonly instances: readonly object[];
  readonly redis: RedisConnection | RedisSetup;
  /** Tasks this process runs at once (default 8). */
  readonly concurrency?: number;
  readonly logger?: Logger;
}

export function createTaskWorker(options: TaskWorkerProcessOptions): TaskWorker {
  const logger = options.logger ?? createConsoleLogger();
  const setup = redisSetup(options.redis);
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  // BullMQ would throw its own message from deep inside; say it in the option's terms.
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a whole number of 1 or more for a worker, got ${concurrency}`);
  }
  const registry = new ToolRegistry({ manifest: options.manifest, instances: options.instances, logger });
  return new TaskWorker({
    ...setup.worker,
    executor: registry,
    connection: setup.connection,
    ...(setup.prefix !== undefined && { prefix: setup.prefix }),
    ...(setup.queue !== undefined && { queue: setup.queue }),
    concurrency,
    logger,
  });
}

export type RunWorkersOptions = Omit<TaskWorkerProcessOptions, 'redis'> & {
  /** Default: `REDIS_URL`. */
  readonly redis?: RedisConnection | RedisSetup;
};

/**
 * The entry point of a worker process: Redis from `REDIS_URL` (and `REDIS_PREFIX`), concurrency
 * from `WORKERS`, lock and stall timings from `WORKER_*` (see `readConfig`) unless given; runs
 * until SIGTERM/SIGINT, then lets running tasks finish within the grace period and hands the
 * rest back to the queue. A bad or missing setting ends the process with one line saying which.
 */
export async function runTaskWorkers(options: RunWorkersOptions): Promise<TaskWorker> {
  const config = readConfigOrExit();
  const redis = options.redis ?? config.redis;
  if (!redis) {
    process.stderr.write(`error: worker processes need Redis: set REDIS_URL to ${CONFIG_VARIABLES.REDIS_URL}\n`);
    process.exit(2);
  }
  if (options.concurrency === undefined && config.workers === 0) {
    process.stderr.write('error: WORKERS="0" is not valid for a worker process: WORKERS must be 1 or more here\n');
    process.exit(2);
  }
  const concurrency = options.concurrency ?? config.workers;
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
