/**
 * What a malformed request gets back, on the raw wire: the answers a client can rely on, whatever
 * serves the request inside (the SDK's per-request path today). Each is an error with a stable
 * JSON-RPC code and, for bad params, the name of the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { openRawSession, pollUntil, type RunningServer, rpc2026, startServer, TASKS_EXTENSION } from './support.js';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({
    ...app,
    resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
  });
});

afterAll(async () => {
  await running?.close();
});

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-server-e2e', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

/** A 2026-07-28 POST with a body as given (possibly not JSON at all). */
async function post2026(
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; message: { id?: unknown; error?: { code: number; message: string } } }> {
  const response = await fetch(running.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      ...headers,
    },
    body,
  });
  return { status: response.status, message: await response.json() };
}

describe('2026-07-28 requests that are wrong', () => {
  it('answers a body that is not JSON with -32700 (HTTP 400) and id null', async () => {
    const reply = await post2026('{"jsonrpc":"2.0","id":1,"method":"tools/list"', { 'mcp-method': 'tools/list' });
    expect(reply.status).toBe(400);
    expect(reply.message).toMatchObject({ id: null, error: { code: -32700 } });
  });

  it('answers an unknown method with -32601 (HTTP 404), echoing the id', async () => {
    const reply = await rpc2026(running.url, 'tools/frobnicate', {});
    expect(reply.status).toBe(404);
    expect(reply.error).toMatchObject({ code: -32601, message: 'Method not found' });
  });

  it('answers a tools/call without a name with -32602 naming the field, not -32603', async () => {
    const reply = await post2026(
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {}, _meta: META } }),
      { 'mcp-method': 'tools/call' },
    );
    expect(reply.message.id).toBe(7);
    expect(reply.message.error?.code).toBe(-32602);
    expect(reply.message.error?.message).toMatch(/^Invalid params for tools\/call: name: /);
  });

  it('answers a tasks/get whose taskId is missing or not a string with -32602 naming taskId', async () => {
    for (const params of [{}, { taskId: 5 }]) {
      const reply = await post2026(
        JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { ...params, _meta: META } }),
        { 'mcp-method': 'tasks/get', 'mcp-name': 'x' },
      );
      expect(reply.message.error?.code).toBe(-32602);
      expect(reply.message.error?.message).toMatch(/tasks\/get: taskId: /);
    }
  });

  it('answers arguments that do not fit the tool with -32602 naming the argument', async () => {
    const reply = await rpc2026(running.url, 'tools/call', { name: 'greet', arguments: { name: 5 } });
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toMatch(/greet: name: /);
  });

  it('refuses a batch of 2026-07-28 requests (the revision has no batches) with -32600, HTTP 400', async () => {
    const one = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: META } });
    const batch = await post2026(JSON.stringify([one(1), one(2)]), { 'mcp-method': 'tools/list' });
    expect(batch.status).toBe(400);
    expect(batch.message).toMatchObject({ id: null, error: { code: -32600 } });
    const empty = await post2026('[]', {});
    expect(empty.status).toBe(400);
    expect(empty.message.error?.code).toBe(-32600);
  });

  it("answers another principal's tasks/get exactly as an unknown id: -32602", async () => {
    const alice = { headers: { authorization: 'Bearer alice-wire' } };
    const bob = { headers: { authorization: 'Bearer bob-wire' } };
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'w' } },
      alice,
    );
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }, alice),
      (reply) => reply.result?.status === 'completed',
    );
    const theirs = await rpc2026(running.url, 'tasks/get', { taskId }, bob);
    const unknown = await rpc2026(running.url, 'tasks/get', { taskId: `${taskId.slice(0, -2)}zz` }, bob);
    expect(theirs.error?.code).toBe(-32602);
    expect(theirs.result).toBeUndefined();
    expect(theirs.error?.message).toBe(unknown.error?.message.replace(`${taskId.slice(0, -2)}zz`, taskId));
  });
});

describe('2025-11-25 requests that are wrong', () => {
  it('answers a tools/call without a name with -32602 naming the field, not -32603', async () => {
    const session = await openRawSession(running.url, { capabilities: { tasks: {} } });
    const response = await fetch(running.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } }),
    });
    const text = await response.text();
    const message = JSON.parse(
      text.startsWith('{') ? text : ((text.split('data: ')[1] ?? '').split('\n')[0] as string),
    );
    expect(message.id).toBe(9);
    expect(message.error?.code).toBe(-32602);
    expect(message.error?.message).toMatch(/^Invalid params for tools\/call: name: /);
  });
});
