/**
 * One guard per workaround for the SDK (src/host/protocol-server.ts names each where it is applied). If an SDK bump changes the
 * behaviour a workaround relies on, the test named after it fails.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import type { Params } from '../../src/protocol/params.js';
import { type Tasks2026CallContext, Tasks2026Dialect } from '../../src/protocol/tasks-2026.js';
import { connectV1, type RunningServer, rpc2026, startServer, TASKS_EXTENSION } from './support.js';

let running: RunningServer;
const updates: unknown[] = [];

beforeAll(async () => {
  // Records what tasks/update hands the adapter, to see the SDK's lift of `inputResponses`.
  const original = Tasks2026Dialect.prototype.updateTask;
  Tasks2026Dialect.prototype.updateTask = function (
    this: Tasks2026Dialect,
    params: Params,
    ctx: Tasks2026CallContext,
    input: unknown,
  ) {
    updates.push(input);
    return original.call(this, params, ctx, input);
  };
  running = await startServer({ manifest: taskManifest, instances: [new FixtureTools(), new GeneralTools()] });
  return () => {
    Tasks2026Dialect.prototype.updateTask = original;
  };
});

afterAll(() => running?.close());

describe('SDK workarounds', () => {
  it('1. tools/call bypasses the result re-validation: B `{task}` and C flat results pass unaltered', async () => {
    const client = await connectV1(running.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'w1' }, task: {} } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    await client.close();
    const modern = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'w1' },
    });
    expect(modern.result?.resultType).toBe('task');
    expect(modern.result && 'content' in modern.result).toBe(false);
  });

  it('2. tasks/get and tasks/cancel registered with schemas pass the 2026 era gate', async () => {
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 5, label: 'w2' },
    });
    const taskId = created.result?.taskId as string;
    expect((await rpc2026(running.url, 'tasks/get', { taskId })).result?.taskId).toBe(taskId);
    expect((await rpc2026(running.url, 'tasks/cancel', { taskId })).result?.resultType).toBe('complete');
  });

  it('3. tasks/update answers arrive through ctx.mcpReq.inputResponses', async () => {
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 5, label: 'w3' },
    });
    const taskId = created.result?.taskId as string;
    const answers = { question: { action: 'accept', content: { ok: true } } };
    const ack = await rpc2026(running.url, 'tasks/update', { taskId, inputResponses: answers });
    expect(ack.result?.resultType).toBe('complete');
    expect(updates.at(-1)).toEqual(answers);
    await rpc2026(running.url, 'tasks/cancel', { taskId });
  });

  it('4. 2025-11-25 traffic is served sessionfully: the session id opens a standalone SSE stream', async () => {
    const init = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'w4', version: '1' } },
      }),
    });
    const sessionId = init.headers.get('mcp-session-id');
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    await init.text();
    // Its headers must come at once, not with the first event (see flushEventStreamHeaders).
    const controller = new AbortController();
    const tooSlow = setTimeout(() => controller.abort(new Error('SSE headers were not flushed')), 5_000);
    const stream = await fetch(running.url, {
      method: 'GET',
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sessionId as string,
        'mcp-protocol-version': '2025-11-25',
      },
      signal: controller.signal,
    });
    clearTimeout(tooSlow);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    controller.abort();
    const gone = await fetch(running.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': sessionId as string, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(gone.status).toBeLessThan(300);
  });

  it('5. capabilities are built per era: tasks on 2025 only, the extension on 2026 only', async () => {
    const client = await connectV1(running.url);
    const legacy = client.getServerCapabilities() as Record<string, unknown>;
    expect(legacy.tasks).toBeDefined();
    expect(legacy.extensions).toBeUndefined();
    await client.close();
    const modern = (await rpc2026(running.url, 'server/discover')).result?.capabilities as Record<string, unknown>;
    expect(modern.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(modern.tasks).toBeUndefined();
  });
});
