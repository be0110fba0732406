/**
 * `http.allowMissingMcpName`: clients in use (FastMCP's Python client) send 2026-07-28
 * `tasks/get`, `tasks/update` and `tasks/cancel` without the `Mcp-Name` header. Strict by
 * default (-32020, HTTP 400); with the option a missing header is read from the body, a
 * mismatched one is still refused, and one principal still never reaches another's task.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { connectTaskClient, isTaskNotFound } from '../../src/client/index.js';
import { type RunningServer, rpc2026, startServer } from './support.js';

let strict: RunningServer;
let lenient: RunningServer;

const byBearer = ({ headers }: { headers?: Headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null;

beforeAll(async () => {
  [strict, lenient] = await Promise.all([
    startServer({ manifest: app.manifest, instances: app.instances, resolvePrincipal: byBearer }),
    startServer({
      manifest: app.manifest,
      instances: app.instances,
      resolvePrincipal: byBearer,
      http: { allowMissingMcpName: true },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([strict?.close(), lenient?.close()]);
});

/** A fetch that drops `Mcp-Name`, as FastMCP's client does on tasks/*; it records what it sent. */
function withoutTaskName(sent: string[]) {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const method = headers.get('mcp-method');
    if (method?.startsWith('tasks/')) {
      headers.delete('mcp-name');
      sent.push(method);
    }
    return fetch(input, { ...init, headers });
  };
}

async function createTask(url: string, token: string, name: string, args: Record<string, unknown>) {
  const created = await rpc2026(
    url,
    'tools/call',
    { name, arguments: args },
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
  expect(created.result?.resultType).toBe('task');
  return created.result?.taskId as string;
}

const postWithoutName = (url: string, method: string, params: Record<string, unknown>, token: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        },
      },
    }),
  });

describe('by default (strict)', () => {
  it('refuses tasks/get without Mcp-Name with -32020 and HTTP 400', async () => {
    const taskId = await createTask(strict.url, 'alice', 'slow_compute', { seconds: 0, label: 'x' });
    const response = await postWithoutName(strict.url, 'tasks/get', { taskId }, 'alice');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32020);
  });
});

describe('with http.allowMissingMcpName', () => {
  it('serves a client that omits Mcp-Name: a whole task with a question, and a cancel', async () => {
    const sent: string[] = [];
    const client = await connectTaskClient(lenient.url, {
      dialect: '2026',
      bearer: 'alice',
      fetch: withoutTaskName(sent),
    });
    try {
      const call = await client.call('confirm_delete', { filename: 'a.txt' });
      for await (const event of call.events)
        if (event.type === 'question') await call.answer(event.question.key, { confirm: true });
      expect(await call.result()).toMatchObject({ content: [{ text: 'Deleted a.txt' }] });
      const long = await client.call('slow_compute', { seconds: 60, label: 'long' });
      expect((await long.cancel()).status).toBe('cancelled');
    } finally {
      await client.close();
    }
    expect(new Set(sent)).toEqual(new Set(['tasks/get', 'tasks/update', 'tasks/cancel']));
  });

  it('still refuses a header that does not match the task id', async () => {
    const taskId = await createTask(lenient.url, 'alice', 'slow_compute', { seconds: 0, label: 'x' });
    const mismatched = await rpc2026(
      lenient.url,
      'tasks/get',
      { taskId },
      {
        headers: { authorization: 'Bearer alice', 'mcp-name': 'some-other-task' },
      },
    );
    expect(mismatched.status).toBe(400);
    expect(mismatched.error?.code).toBe(-32020);
  });

  it('keeps tasks apart: without the header, bob still cannot read or cancel alice’s task', async () => {
    const taskId = await createTask(lenient.url, 'alice', 'slow_compute', { seconds: 60, label: 'hers' });
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const asBob = await postWithoutName(lenient.url, method, { taskId }, 'bob');
      const body = (await asBob.json()) as { error?: { code: number } };
      expect(body.error?.code, method).toBe(-32602);
    }
    const bob = await connectTaskClient(lenient.url, { dialect: '2026', bearer: 'bob', fetch: withoutTaskName([]) });
    try {
      await expect(bob.task(taskId).status()).rejects.toSatisfy(isTaskNotFound);
    } finally {
      await bob.close();
    }
    const asAlice = await postWithoutName(lenient.url, 'tasks/get', { taskId }, 'alice');
    expect(((await asAlice.json()) as { result: { status: string } }).result.status).toBe('working');
  });
});
