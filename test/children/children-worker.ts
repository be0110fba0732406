/**
 * A worker process of the child-task app, made as an app makes one (`createTaskWorker`), that
 * reports its task lifecycle as JSON lines on stdout (`ready`, then `started` / `parked` /
 * `spawned` ... with the task id and tool), so the tests can tell which process ran what.
 */
import { createTaskWorker } from '../../src/host/workers.js';
import type { Logger } from '../../src/observe/logger.js';
import { runWorkersUntilSignal } from '../../src/runtime/bullmq/index.js';
import { childrenManifest, Fanner } from './children-app.js';

function say(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

const line =
  () =>
  (_message: string, data?: Record<string, unknown>): void => {
    if (data && typeof data.event === 'string' && typeof data.taskId === 'string') {
      say({ event: data.event, taskId: data.taskId, tool: data.tool, pid: process.pid });
    }
  };
const logger: Logger = { debug: () => {}, info: line(), warn: line(), error: line() };
const optional = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]));
const lockDurationMs = optional('LOCK_MS');
const stalledIntervalMs = optional('STALLED_MS');
const shards = optional('SHARDS');
const worker = createTaskWorker({
  manifest: childrenManifest,
  instances: [new Fanner()],
  redis: {
    connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    prefix: process.env.PREFIX as string,
    ...(shards !== undefined && { shards }),
    worker: {
      ...(lockDurationMs !== undefined && { lockDurationMs }),
      ...(stalledIntervalMs !== undefined && { stalledIntervalMs }),
      maxStalledCount: 2,
    },
  },
  concurrency: optional('CONCURRENCY') ?? 4,
  logger,
  ...(optional('MAX_CHILDREN') !== undefined && { limits: { maxChildrenPerTask: optional('MAX_CHILDREN') as number } }),
});
await worker.started;
say({ event: 'ready', pid: process.pid });
await runWorkersUntilSignal([worker]);
