/**
 * One trace per task: the span of the `tools/call` that created it, the run's span in whichever
 * worker took the job (the context travels in the BullMQ job), and child spans for each
 * `ctx.step` and each question wait; `tasks/result` has its own span. An in-memory exporter
 * collects them. Without an SDK all of it is a no-op (every other test runs that way).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { context, propagation, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskWorker } from '../../src/host/workers.js';
import { silentLogger } from '../../src/observe/logger.js';
import type { TaskWorker } from '../../src/runtime/bullmq/worker.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { OpsTools, opsManifest } from './ops-app.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  provider.register();
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

async function answeringClient(url: string): Promise<Client> {
  const client = await connectV1(url, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { approve: true } }));
  return client;
}

async function runTask(client: Client, name: string, args: Record<string, unknown>) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  return created.task.taskId;
}

/** The spans of one task's run, found by its id. */
async function runSpans(tool: string, taskId: string): Promise<ReadableSpan[]> {
  return pollUntil(
    async () => named(`task ${tool}`).filter((span) => span.attributes['mcp.task.id'] === taskId),
    (spans) => spans.length > 0,
  );
}

describe('traces on the in-process runtime', () => {
  let running: RunningServer;
  let client: Client;

  beforeAll(async () => {
    running = await startServer({ manifest: opsManifest, instances: [new OpsTools()] });
    client = await answeringClient(running.url);
  });
  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('put the run and its steps under the tools/call that created the task', async () => {
    exporter.reset();
    const taskId = await runTask(client, 'crawl', { pages: 2, pauseMs: 0 });
    const [run] = await runSpans('crawl', taskId);
    const call = named('tools/call').find((span) => span.attributes['mcp.tool.name'] === 'crawl');
    expect(call).toBeDefined();
    expect(run?.spanContext().traceId).toBe(call?.spanContext().traceId);
    expect(parentOf(run as ReadableSpan)).toBe(call?.spanContext().spanId);
    const [step] = named('task step plan');
    expect(parentOf(step as ReadableSpan)).toBe(run?.spanContext().spanId);
    expect(named('tasks/result').length).toBeGreaterThan(0);
  });
});

describeWithRedis('traces across the BullMQ job', () => {
  const prefix = randomPrefix();
  let running: RunningServer;
  let worker: TaskWorker;
  let client: Client;

  beforeAll(async () => {
    // The server runs no tasks: the run happens in a worker with its own Redis connections,
    // which can join the trace only through the context carried in the job.
    running = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      redis: { connection: REDIS_URL, prefix },
      workers: 0,
    });
    worker = createTaskWorker({
      manifest: opsManifest,
      instances: [new OpsTools()],
      redis: { connection: REDIS_URL, prefix },
      logger: silentLogger,
    });
    await worker.started;
    client = await answeringClient(running.url);
  });
  afterAll(async () => {
    await client?.close();
    await worker?.close();
    await running?.close();
    await deleteKeysUnder(prefix);
  });

  it("join the worker's run, and its question wait, to the server's trace", async () => {
    exporter.reset();
    const taskId = await runTask(client, 'publish', {});
    const runs = await runSpans('publish', taskId);
    const call = named('tools/call').find((span) => span.attributes['mcp.tool.name'] === 'publish');
    expect(call).toBeDefined();
    for (const run of runs) {
      expect(run.spanContext().traceId).toBe(call?.spanContext().traceId);
      expect(parentOf(run)).toBe(call?.spanContext().spanId);
    }
    const waits = named('task input approval');
    expect(waits.length).toBeGreaterThan(0);
    expect(runs.map((run) => run.spanContext().spanId)).toContain(parentOf(waits[0] as ReadableSpan));
  });
});
