/**
 * Worker processes: run the tasks of an app on the BullMQ runtime, next to any number of server
 * processes that share its Redis.
 */
import { TaskEngine } from '../engine/engine.js';
import { observeAll } from '../engine/lifecycle.js';
import type { TaskPolicy } from '../engine/policy.js';
import { createPinoLogger, loggerFromPino, logObserver, type PinoLike, toLogger } from '../observe/log.js';
import { type Logger, silentLogger } from '../observe/logger.js';
import { metricsFromEnvironment, TaskMetrics } from '../observe/metrics.js';
import { BullmqTaskRuntime, type RedisConnection, runWorkersUntilSignal, TaskWorker } from '../runtime/bullmq/index.js';
import type { TaskManifest } from '../tools/definition.js';
import { ToolRegistry } from '../tools/registry.js';
import { CONFIG_VARIABLES, readConfigOrExit } from './config.js';
import { limitsFromEnvironment, resolveLimits, type TaskServerLimits } from './limits.js';
import {
  checkOf,
  type HealthServer,
  operatorRoutes,
  serveOperatorRoutes,
  warnIfMetricsOpen,
} from './operator-routes.js';
import { DEFAULT_WORKER_CONCURRENCY, type RedisSetup, redisSetup } from './runtime-choice.js';
import type { MetricsOptions } from './task-server.js';

/**
 * What `createTaskWorker` needs: the same manifest and instances as the server, and the Redis
 * the server's BullMQ runtime uses (with the same prefix, queue and shard count).
 */
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
  /**
   * The servers' public base URL, for the callback URLs `ctx.callback` makes here (see
   * `TaskServerOptions.publicUrl`). Default: `MCP_TASK_PUBLIC_URL`.
   */
  readonly publicUrl?: string;
  /**
   * The bounds children started here with `ctx.spawn` are created under, as on the servers
   * (`maxLiveTasksPerPrincipal`, `maxRunningTasksPerPrincipal`, `maxChildrenPerTask`,
   * `maxArgumentBytes`); default: the `MCP_TASK_<NAME>` variables, else the defaults. Give the
   * servers and the workers the same values.
   */
  readonly limits?: Partial<TaskServerLimits>;
  /** Retention and polling limits for the children started here (as the server's `policy`). */
  readonly policy?: Partial<TaskPolicy>;
}

/**
 * Starts a BullMQ worker that runs this app's tasks, taken from the queue the servers sharing
 * `redis` fill. It begins taking jobs at once (`started` resolves when it does); `close()` lets
 * running tasks finish within the shutdown grace period and hands the rest back to the queue.
 * Reads no environment except `MCP_TASK_MAX_RESULT_BYTES` and `MCP_TASK_PUBLIC_URL`; `runTaskWorkers` is the whole-process
 * version with signals and health routes.
 *
 * Throws `RangeError` when `concurrency` is not a whole number of 1 or more, and `ManifestError`
 * when the manifest and the classes disagree.
 *
 * @example
 * ```ts
 * import { createTaskWorker } from 'mcp-task-server';
 * import { taskManifest } from './__generated__/tasks.generated.js';
 * import { Reports } from './reports.js';
 *
 * const worker = createTaskWorker({
 *   manifest: taskManifest,
 *   instances: [new Reports()],
 *   redis: 'redis://127.0.0.1:6379',
 *   concurrency: 4,
 * });
 * await worker.started;
 * process.once('SIGTERM', () => void worker.close());
 * ```
 */
export function createTaskWorker(options: TaskWorkerProcessOptions): TaskWorker {
  const logger = options.logger ? toLogger(options.logger) : defaultWorkerLogger();
  const setup = redisSetup(options.redis);
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  // BullMQ would throw its own message from deep inside; say it in the option's terms.
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a whole number of 1 or more for a worker, got ${concurrency}`);
  }
  const observer = observeAll([logger === silentLogger ? undefined : logObserver(logger, 'worker'), options.metrics]);
  const fromEnvironment = limitsFromEnvironment();
  const maxResultBytes = options.maxResultBytes ?? fromEnvironment.maxResultBytes;
  const limits = resolveLimits({ ...fromEnvironment, ...options.limits });
  const publicUrl = options.publicUrl ?? (process.env.MCP_TASK_PUBLIC_URL || undefined);
  const registry = new ToolRegistry({
    manifest: options.manifest,
    instances: options.instances,
    logger,
    observer,
    maxArgumentBytes: limits.maxArgumentBytes,
    ...(maxResultBytes !== undefined && { maxResultBytes }),
    ...(publicUrl !== undefined && { publicUrl }),
  });
  // Children a method spawns here are created as a server creates tasks: through an engine
  // over the same Redis (no worker of its own: this process's TaskWorker runs them).
  const childRuntime = new BullmqTaskRuntime({
    connection: setup.connection,
    ...(setup.prefix !== undefined && { prefix: setup.prefix }),
    ...(setup.queue !== undefined && { queue: setup.queue }),
    ...(setup.shards !== undefined && { shards: setup.shards }),
    logger,
  });
  registry.spawnWith(
    new TaskEngine({
      runtime: childRuntime,
      policy: {
        maxLiveTasksPerOwner: limits.maxLiveTasksPerPrincipal,
        maxRunningTasksPerOwner: limits.maxRunningTasksPerPrincipal,
        maxChildrenPerTask: limits.maxChildrenPerTask,
        ...options.policy,
      },
      observer,
    }),
  );
  return new TaskWorker({
    onClosed: () => childRuntime.close(),
    ...setup.worker,
    executor: registry,
    connection: setup.connection,
    ...(setup.prefix !== undefined && { prefix: setup.prefix }),
    ...(setup.queue !== undefined && { queue: setup.queue }),
    ...(setup.shards !== undefined && { shards: setup.shards }),
    concurrency,
    logger,
  });
}

/**
 * `runTaskWorkers`' options: a worker's, with Redis read from the environment when not given,
 * and an optional health port for container probes.
 */
export type RunWorkersOptions = Omit<TaskWorkerProcessOptions, 'redis' | 'metrics'> & {
  /** Default: `REDIS_URL`. */
  readonly redis?: RedisConnection | RedisSetup;
  /**
   * Serve `/healthz`, `/readyz` (and `/metrics` when enabled, behind the metrics token when one
   * is set, as on servers) on this port, for container orchestrators. Default: `HEALTH_PORT`;
   * none when unset. Listens on `HEALTH_HOST` (default 0.0.0.0: probes come from outside the
   * container); open metrics on such an address are warned about at start-up.
   */
  readonly healthPort?: number;
  /** Metrics on the health port (default: on when `MCP_TASK_METRICS=1`). */
  readonly metrics?: boolean | MetricsOptions;
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
    process.stderr.write(
      `error: worker processes need Redis: set REDIS_URL to ${CONFIG_VARIABLES.REDIS_URL}, or REDIS_CLUSTER_NODES, or REDIS_SENTINELS\n`,
    );
    process.exit(2);
  }
  if (options.concurrency === undefined && config.workers === 0) {
    process.stderr.write('error: WORKERS="0" is not valid for a worker process: WORKERS must be 1 or more here\n');
    process.exit(2);
  }
  const concurrency = options.concurrency ?? config.workers;
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
  const healthPort = options.healthPort ?? config.healthPort;
  let health: HealthServer | undefined;
  if (healthPort !== undefined) {
    if (!Number.isInteger(healthPort) || healthPort < 0 || healthPort > 65_535) {
      throw new RangeError(`HEALTH_PORT must be a port number (0-65535), got ${String(healthPort)}`);
    }
    // Probes come from outside the container: all interfaces unless HEALTH_HOST says otherwise.
    const healthHost = config.healthHost ?? '0.0.0.0';
    const metricsToken =
      (typeof metricsOption === 'object' ? metricsOption.token : undefined) ??
      (process.env.MCP_TASK_METRICS_TOKEN || undefined);
    health = await serveOperatorRoutes(
      operatorRoutes({
        readiness: async () => ({ redis: await checkOf(() => worker.checkReady()) }),
        ...(metrics && { metrics }),
        ...(metricsToken !== undefined && { metricsToken }),
        logger,
      }),
      { port: healthPort, host: healthHost },
    );
    logger.info(`health routes on port ${health.port}`, { port: health.port });
    warnIfMetricsOpen(logger, { metrics: metrics !== undefined, token: metricsToken !== undefined, host: healthHost });
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
