/**
 * Drives the app's tasks the way an MCP client does: the v1 SDK client (protocol 2025-11-25) over
 * Streamable HTTP, against the server on a free port with the in-process runtime.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
  type GetTaskResult,
} from '@modelcontextprotocol/sdk/types.js';
import { createTaskServer, silentLogger, type TaskServer } from 'mcp-task-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { app } from '../src/app.js';

let server: TaskServer;
let client: Client;
/** How the client answers the next question; each test sets it. */
let answer: ElicitResult;
/** The questions the client was asked. */
let asked: string[];

beforeAll(async () => {
  server = createTaskServer({ ...app, logger: silentLogger });
  const { url } = await server.listen({ port: 0, host: '127.0.0.1' });
  client = new Client({ name: 'app-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return answer;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

beforeEach(() => {
  answer = { action: 'cancel' };
  asked = [];
});

async function startCount(below: number): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'count_primes', arguments: { below }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

/** Polls `tasks/get` until `done` says so. */
async function waitFor(taskId: string, done: (task: GetTaskResult) => boolean): Promise<GetTaskResult> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is still ${task.status}: ${task.statusMessage}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('count_primes', () => {
  it('runs as a task: start, poll until completed, collect the result', async () => {
    const taskId = await startCount(100_000);
    const done = await waitFor(taskId, (task) => task.status !== 'working');
    expect(done.status).toBe('completed');

    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ below: 100_000, count: 9592, largest: 99_991 });
    expect(asked).toEqual([]);
  });

  it('asks before a long count, and counts once the answer is yes', async () => {
    answer = { action: 'accept', content: { start: true } };
    const taskId = await startCount(2_000_000);
    await waitFor(taskId, (task) => task.status === 'input_required');

    // tasks/result delivers the question (the handler above answers it), then waits for the end.
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(asked).toEqual(['Counting the primes below 2,000,000 takes a while. Start?']);
    expect(result.structuredContent).toEqual({ below: 2_000_000, count: 148_933, largest: 1_999_993 });
  });

  it('ends with a tool error when the answer is no', async () => {
    answer = { action: 'accept', content: { start: false } };
    const taskId = await startCount(2_000_000);
    await waitFor(taskId, (task) => task.status === 'input_required');

    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'Not started: the count was declined.' }]);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
  });

  it('stops a running count when the task is cancelled', async () => {
    answer = { action: 'accept', content: { start: true } };
    const taskId = await startCount(1_000_000_000);
    await waitFor(taskId, (task) => task.status === 'input_required');
    // Answer the question; this call would then wait for the (very long) count to end.
    const ending = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((error) => error);

    const counting = await waitFor(taskId, (task) => task.statusMessage?.startsWith('checked') ?? false);
    expect(counting.status).toBe('working');
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    await ending;
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  });

  it('refuses arguments that do not fit the input schema', async () => {
    await expect(client.callTool({ name: 'count_primes', arguments: { below: 1 } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('below: Too small'),
    });
  });
});

describe('is_prime', () => {
  it('answers at once, without a task', async () => {
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'is_prime')?.execution).toEqual({ taskSupport: 'forbidden' });

    expect((await client.callTool({ name: 'is_prime', arguments: { n: 97 } })).structuredContent).toEqual({
      n: 97,
      prime: true,
    });
    expect((await client.callTool({ name: 'is_prime', arguments: { n: 91 } })).structuredContent).toEqual({
      n: 91,
      prime: false,
      divisor: 7,
    });
  });
});
