/**
 * The conformance fixture under both current dialects: the error rules of
 * docs/traceability.md (rows B-* and C-*), checked with real clients.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectV1,
  pollUntil,
  type RunningServer,
  rpc2026,
  startServer,
  TASKS_EXTENSION,
} from '../../test/e2e/support.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { FixtureTools } from './src/fixture-tools.js';
import { GeneralTools } from './src/general-tools.js';

let running: RunningServer;
let client: Client;

beforeAll(async () => {
  running = await startServer({ manifest: taskManifest, instances: [new FixtureTools(), new GeneralTools()] });
  client = await connectV1(running.url);
});

afterAll(async () => {
  await client?.close();
  await running?.close();
});

describe('2025-11-25 core tasks: error rules', () => {
  it('-32601 when a required tool is called without a task (a MUST)', async () => {
    await expect(
      client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32601 });
  });

  it('-32601 when a forbidden tool is called with a task (a SHOULD)', async () => {
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'greet', arguments: { name: 'x' }, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32601 });
  });

  it('a tool error fails the task, and tasks/result replays the isError result', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'failing_job', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    const task = await client.experimental.tasks.getTask(created.task.taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toBe('The job failed on purpose');
  });

  it('tasks/result replays a JSON-RPC error as the same error', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'protocol_error_job', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    await expect(
      client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('protocol error on purpose') });
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('failed');
  });

  it('does not offer tasks/list to an anonymous HTTP session (the security rule)', async () => {
    expect(client.getServerCapabilities()?.tasks?.list).toBeUndefined();
    await expect(client.experimental.tasks.listTasks()).rejects.toMatchObject({ code: -32601 });
  });

  it('answers tasks/result when the task ends, not at its poll interval', async () => {
    // Every task of this server suggests polling every 30 s: an answer driven by polling would
    // take that long; one driven by the completion event comes about a second after creation.
    const slowPolling = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      policy: { minPollIntervalMs: 30_000, defaultPollIntervalMs: 30_000 },
    });
    const polled = await connectV1(slowPolling.url);
    try {
      const createdAt = Date.now();
      const created = await polled.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 1, label: 'fast' }, task: {} } },
        CreateTaskResultSchema,
      );
      expect(created.task.pollInterval).toBe(30_000);
      const result = await polled.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'Computed fast in 1s' }]);
      // Generous for a loaded machine, and still far below one poll interval.
      expect(Date.now() - createdAt).toBeLessThan(15_000);
    } finally {
      await polled.close();
      await slowPolling.close();
    }
  });
});

describe('2026-07-28 tasks extension: rules', () => {
  it('discover declares the extension and no core tasks capability', async () => {
    const reply = await rpc2026(running.url, 'server/discover');
    const capabilities = reply.result?.capabilities as Record<string, unknown>;
    expect(capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(capabilities.tasks).toBeUndefined();
  });

  it('a required tool without the extension is -32021 naming the capability', async () => {
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'failing_job', arguments: {} },
      { capabilities: {} },
    );
    expect(reply.status).toBe(400);
    expect(reply.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it('tasks/* without the extension are -32021 even for unknown ids', async () => {
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const reply = await rpc2026(running.url, method, { taskId: 'gate-test' }, { capabilities: {} });
      expect(reply.error?.code, method).toBe(-32021);
    }
  });

  it('an optional task tool runs inline for a client without the extension', async () => {
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'inline' } },
      { capabilities: {} },
    );
    expect(reply.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Computed inline in 0s' }],
    });
    expect(reply.result?.taskId).toBeUndefined();
  });

  it('a tool error completes the task with the isError result inlined; a JSON-RPC error fails it', async () => {
    const toolError = await rpc2026(running.url, 'tools/call', { name: 'failing_job', arguments: {} });
    const protocolError = await rpc2026(running.url, 'tools/call', { name: 'protocol_error_job', arguments: {} });
    const settle = (taskId: string) =>
      pollUntil(
        () => rpc2026(running.url, 'tasks/get', { taskId }),
        (r) => r.result?.status !== 'working',
      );
    const completed = await settle(toolError.result?.taskId as string);
    expect(completed.result).toMatchObject({ status: 'completed', result: { isError: true } });
    const failed = await settle(protocolError.result?.taskId as string);
    expect(failed.result).toMatchObject({ status: 'failed', error: { code: -32603, data: { reason: 'simulated' } } });
    expect(failed.result?.result).toBeUndefined();
  });

  it('tasks/result and tasks/list do not exist on 2026-07-28 (-32601)', async () => {
    expect((await rpc2026(running.url, 'tasks/result', { taskId: 'x' })).error?.code).toBe(-32601);
    expect((await rpc2026(running.url, 'tasks/list', {})).error?.code).toBe(-32601);
  });

  it('ignores a legacy params.task and never turns a plain tool into a task', async () => {
    const reply = await rpc2026(running.url, 'tools/call', {
      name: 'greet',
      arguments: { name: 'legacy' },
      task: { ttl: 1 },
    });
    expect(reply.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, legacy!' }] });
  });

  it('-32602 for an unknown task id, and an idempotent ack when cancelling a finished task', async () => {
    expect((await rpc2026(running.url, 'tasks/get', { taskId: 'nope' })).error?.code).toBe(-32602);
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'x' },
    });
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }),
      (r) => r.result?.status === 'completed',
    );
    expect((await rpc2026(running.url, 'tasks/cancel', { taskId })).result?.resultType).toBe('complete');
  });

  it('-32020 when Mcp-Name does not match the task id', async () => {
    const reply = await rpc2026(running.url, 'tasks/get', { taskId: 'abc' }, { headers: { 'mcp-name': 'other' } });
    expect(reply.status).toBe(400);
    expect(reply.error?.code).toBe(-32020);
  });
});
