/**
 * Worker processes: run the tasks of an app on the BullMQ runtime, next to any number of server
 * processes that share its Redis.
 */
import { observeAll } from '../engine/lifecycle.js';
import { createPinoLogger, loggerFromPino, logObserver, type PinoLike, toLogger } from '../observe/log.js';
import { metricsFromEnvironment, TaskMetrics } from '../observe/metrics.js';
import { type RedisConnection, runWorkersUntilSignal, TaskWorker } from '../runtime/bullmq/index.js';
import type { TaskManifest } from '../tools/definition.js';
import type { Logger } from '../tools/logger.js';
import { ToolRegistry } from '../tools/registry.js';
import { limitsFromEnvironment } from './limits.js';
import { checkOf, type HealthServer, operatorRoutes, serveOperatorRoutes } from './operator-routes.js';
import { DEFAULT_WORKER_CONCURRENCY, type RedisSetup, redisFromEnvironment, redisSetup } from './runtime-choice.js';
import type { MetricsOptions } from './task-server.js';

export interface TaskWorkerProcessOptions {
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes, as the server gets them. */
  readonly instances: readonly object[];
  readonly redis: RedisConnection | RedisSetup;
  /** Tasks this process runs at once (default 8). */
  readonly concurrency?: number;
  /** Largest result a task may store (default 4 MiB, or `MCP_TASK_MAX_RESULT_BYTES`); a bigger one fails the task. */
  readonly maxResultBytes?: number;
  /** The framework's `Logger` or a pino logger (default: pino with `role: "worker"`, as on servers). */
  readonly logger?: Logger | PinoLike;
  /** Counts this worker's runs for `/metrics` on its health port. */
  readonly metrics?: TaskMetrics;
}

export function createTaskWorker(options: TaskWorkerProcessOptions): TaskWorker {
  const logger = options.logger ? toLogger(options.logger) : defaultWorkerLogger();
  const setup = redisSetup(options.redis);
  const observer = observeAll([logObserver(logger, 'worker'), options.metrics]);
  const maxResultBytes = options.maxResultBytes ?? limitsFromEnvironment().maxResultBytes;
  const registry = new ToolRegistry({
    manifest: options.manifest,
    instances: options.instances,
    logger,
    observer,
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

export type RunWorkersOptions = Omit<TaskWorkerProcessOptions, 'redis' | 'metrics'> & {
  /** Default: `REDIS_URL`. */
  readonly redis?: RedisConnection | RedisSetup;
  /**
   * Serve `/healthz`, `/readyz` (and `/metrics` when enabled) on this port, for container
   * orchestrators. Default: `HEALTH_PORT`; none when unset. Listens on `HEALTH_HOST` (default
   * 0.0.0.0: probes come from outside the container).
   */
  readonly healthPort?: number;
  /** Metrics on the health port (default: on when `MCP_TASK_METRICS=1`). */
  readonly metrics?: boolean | MetricsOptions;
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
  const logger = options.logger ? toLogger(options.logger) : defaultWorkerLogger();
  const metricsOption = options.metrics ?? metricsFromEnvironment();
  const metrics = metricsOption ? new TaskMetrics() : undefined;
  const { metrics: _metricsOption, healthPort: _healthPort, ...workerOptions } = options;
  const worker = createTaskWorker({
    ...workerOptions,
    redis,
    logger,
    ...(concurrency !== undefined && { concurrency }),
    ...(metrics && { metrics }),
  });
  const healthPort = options.healthPort ?? (process.env.HEALTH_PORT ? Number(process.env.HEALTH_PORT) : undefined);
  let health: HealthServer | undefined;
  if (healthPort !== undefined) {
    if (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65_535) {
      throw new RangeError(`HEALTH_PORT must be a port number (0-65535), got ${String(healthPort)}`);
    }
    const metricsToken =
      (typeof metricsOption === 'object' ? metricsOption.token : undefined) ??
      (process.env.MCP_TASK_METRICS_TOKEN || undefined);
    health = await serveOperatorRoutes(
      operatorRoutes({
        readiness: async () => ({ redis: await checkOf(() => worker.checkReady()) }),
        ...(metrics && { metrics }),
        ...(metricsToken !== undefined && { metricsToken }),
      }),
      { port: healthPort, host: process.env.HEALTH_HOST ?? '0.0.0.0' },
    );
    logger.info(`health routes on port ${health.port}`, { port: health.port });
  }
  const healthServer = health;
  void runWorkersUntilSignal([worker, ...(healthServer ? [{ close: () => healthServer.close() }] : [])], {
    onSignal: (signal) => logger.info(`${signal} received, stopping workers`),
  });
  await worker.started;
  // stdout, so scripts can wait for this line.
  process.stdout.write(
    `MCP task worker running ${concurrency ?? DEFAULT_WORKER_CONCURRENCY} tasks at once on queue ${worker.names.queue}\n`,
  );
  return worker;
}

function defaultWorkerLogger(): Logger {
  return loggerFromPino(createPinoLogger({ role: 'worker' }));
}
