/**
 * Benchmark 5: completion-to-reply latency. A task method sleeps 20 ms and notes the moment it
 * returns; a v1 SDK client (`@modelcontextprotocol/sdk` 1.32.2, protocol 2025-11-25 over
 * Streamable HTTP) has already sent the blocking `tasks/result`. Measured from the method's
 * return to (a) the `tasks/result` reply arriving at the client and (b) the
 * `notifications/tasks/status` (`completed`) arriving on its standalone SSE stream.
 *
 * Runtimes: BullMQ (a `TaskWorker` in the server process: record write → Redis pub/sub → the
 * waiting request) and in-process. Alternative measured in the same run: raw BullMQ, from the
 * processor's return to `job.waitUntilFinished(queueEvents)` resolving (QueueEvents' XREAD
 * BLOCK on the events stream), which is how a raw BullMQ app learns a job finished.
 *
 * Everything runs in one process (one clock, `performance.now()`); one task at a time.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/latency.ts
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { taskManifest } from '../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../examples/conformance-fixture/src/general-tools.js';
import { createTaskServer, type TaskServerOptions } from '../src/host/task-server.js';
import { silentLogger } from '../src/observe/logger.js';
import type { TaskContext } from '../src/tools/context.js';
import {
  deleteKeysUnder,
  fmt,
  median,
  now,
  percentile,
  quietAbortListenerWarnings,
  REDIS_URL,
  type Row,
  redisClient,
  report,
  runMain,
  sleep,
  uniquePrefix,
} from './support.js';

const ITERATIONS = 300;
const WARMUP = 20;
const WORK_MS = 20;

/** When each task's method returned, by label. */
const returnedAt = new Map<string, number>();

/** The fixture's tools, with `slow_compute` noting the moment it returns. */
class TimedTools extends FixtureTools {
  override async slowCompute(seconds: number, label: string, _ctx: TaskContext): Promise<string> {
    await sleep(seconds * 1000);
    const text = `Computed ${label} in ${seconds}s`;
    returnedAt.set(label, now());
    return text;
  }
}

interface Latencies {
  readonly reply: number[];
  readonly notification: number[];
}

async function measureFramework(name: string, options: Partial<TaskServerOptions>): Promise<Latencies> {
  const server = createTaskServer({
    manifest: taskManifest,
    instances: [new TimedTools(), new GeneralTools()],
    logger: silentLogger,
    ...options,
  });
  const listening = await server.listen({ port: 0, host: '127.0.0.1' });
  const client = new Client({ name: 'mcp-task-server-bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(listening.url)));
  const notified = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
    if (notification.params.status !== 'completed') return;
    notified.set(notification.params.taskId, now());
    waiting.get(notification.params.taskId)?.();
  });
  // The standalone SSE stream opens asynchronously after `initialize`; give it a moment.
  await sleep(200);

  const result: Latencies = { reply: [], notification: [] };
  try {
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const label = `${name}-${i}`;
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: WORK_MS / 1000, label }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      const notification = new Promise<void>((resolve) => {
        if (notified.has(taskId)) resolve();
        else waiting.set(taskId, resolve);
      });
      const reply = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      const replyAt = now();
      const timeout = sleep(2000).then(() => {
        throw new Error(`${name}: no completed notification for task ${taskId}`);
      });
      await Promise.race([notification, timeout]);
      const returned = returnedAt.get(label);
      if (returned === undefined || !JSON.stringify(reply.content).includes(label)) {
        throw new Error(`${name}: unexpected result for ${label}: ${JSON.stringify(reply)}`);
      }
      if (i >= WARMUP) {
        result.reply.push(replyAt - returned);
        result.notification.push((notified.get(taskId) as number) - returned);
      }
      waiting.delete(taskId);
    }
  } finally {
    await client.close();
    await server.close();
  }
  return result;
}

async function measureRawBullmq(prefix: string): Promise<number[]> {
  const connection = redisClient();
  const queue = new Queue('raw', { connection, prefix });
  const events = new QueueEvents('raw', { connection: redisClient(), prefix });
  const worker = new Worker(
    'raw',
    async (job) => {
      await sleep(WORK_MS);
      returnedAt.set(job.data.label as string, now());
      return { content: [{ type: 'text', text: `Computed ${job.data.label}` }] };
    },
    { connection: redisClient(), prefix, concurrency: 8 },
  );
  await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
  const latencies: number[] = [];
  try {
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      const label = `raw-${i}`;
      const job = await queue.add('slow_compute', { tool: 'slow_compute', args: { seconds: WORK_MS / 1000 }, label });
      await job.waitUntilFinished(events, 2000);
      const finishedAt = now();
      if (i >= WARMUP) latencies.push(finishedAt - (returnedAt.get(label) as number));
    }
  } finally {
    await worker.close();
    await events.close();
    await queue.close();
    connection.disconnect();
  }
  return latencies;
}

async function main(): Promise<void> {
  quietAbortListenerWarnings();
  const prefix = uniquePrefix('latency');
  let bullmq: Latencies;
  let memory: Latencies;
  let raw: number[];
  try {
    raw = await measureRawBullmq(prefix);
    bullmq = await measureFramework('bullmq', {
      redis: { connection: REDIS_URL, prefix, queue: 'latency' },
      workers: 8,
    });
    memory = await measureFramework('memory', {});
  } finally {
    await deleteKeysUnder(prefix);
  }

  const stats = (samples: number[]) => ({ p50: median(samples), p99: percentile(samples, 99) });
  const lines: [string, number[]][] = [
    ['BullMQ runtime: tasks/result reply', bullmq.reply],
    ['BullMQ runtime: notifications/tasks/status', bullmq.notification],
    ['in-process runtime: tasks/result reply', memory.reply],
    ['in-process runtime: notifications/tasks/status', memory.notification],
    ['raw BullMQ: waitUntilFinished (QueueEvents)', raw],
  ];
  console.log(`completion → arrival, ms (${ITERATIONS} tasks each, ${WORK_MS} ms of work, one at a time)`);
  const { printTable } = await import('./support.js');
  printTable(
    ['path', 'median ms', 'p99 ms'],
    lines.map(([name, samples]) => [name, fmt(stats(samples).p50, 2), fmt(stats(samples).p99, 2)]),
  );

  const rawMedian = median(raw);
  const rows: Row[] = lines.slice(0, 4).map(([name, samples]) => ({
    bench: '5 completion→reply',
    metric: `${name}: median (p99 ${fmt(stats(samples).p99, 1)} ms) vs raw QueueEvents; ratio lower is better`,
    framework: `${fmt(stats(samples).p50, 2)} ms`,
    baseline: `${fmt(rawMedian, 2)} ms`,
    ratio: stats(samples).p50 / rawMedian,
    // The target is absolute: a median of at most 5 ms.
    target: 'median <= 5 ms',
    met: stats(samples).p50 <= 5,
  }));
  report(rows);
}

runMain(main);
