/**
 * The smaller protocol rules of docs/traceability.md that the larger suites pass by construction:
 * each is pinned here so that a change that breaks one fails a test named after it.
 * Row ids refer to docs/traceability.md.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { app } from '../../examples/conformance-fixture/app.js';
import { connectV1, pollUntil, type RunningServer, rpc2026, startServer, TASKS_EXTENSION } from './support.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const AnyResult = z.looseObject({});
let running: RunningServer;
let client: Client;

beforeAll(async () => {
  running = await startServer({
    ...app,
    resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
  });
  client = await connectV1(running.url, { token: 'edge' });
});

afterAll(async () => {
  await client?.close();
  await running?.close();
});

async function finishedTaskB(): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'edge' }, task: {} } },
    CreateTaskResultSchema,
  );
  await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  return created.task.taskId;
}

describe('2025-11-25 edges', () => {
  it('B-46, B-47: ignores related-task _meta on tasks/get and tasks/cancel, and puts none on the replies', async () => {
    const taskId = await finishedTaskB();
    const decoy = { [RELATED]: { taskId: 'some-other-task' } };
    const got = await client.request({ method: 'tasks/get', params: { taskId, _meta: decoy } }, AnyResult);
    expect(got).toMatchObject({ taskId, status: 'completed' });
    expect((got._meta as Record<string, unknown> | undefined)?.[RELATED]).toBeUndefined();
    await expect(
      client.request({ method: 'tasks/cancel', params: { taskId, _meta: decoy } }, AnyResult),
    ).rejects.toMatchObject({ code: -32602 });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed._meta?.[RELATED]).toBeUndefined();
  });

  it('D-2: a 2025 session that declares the 2026 tasks extension still gets 2025 behaviour', async () => {
    const declaring = await connectV1(running.url, {
      token: 'edge',
      capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
    const result = await declaring.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'inline' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Computed inline in 0s' }]);
    expect((result as Record<string, unknown>).resultType).toBeUndefined();
    await declaring.close();
  });
});

describe('protocol versions before tasks', () => {
  it('D-10: offers tasks only to sessions of 2025-11-25 or later', async () => {
    const capabilitiesFor = async (protocolVersion: string) => {
      const response = await fetch(running.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion, capabilities: {}, clientInfo: { name: 'old', version: '1' } },
        }),
      });
      const text = await response.text();
      const message = JSON.parse(
        text.startsWith('{') ? text : ((text.split('data: ')[1] ?? '').split('\n')[0] as string),
      );
      return message.result as { protocolVersion: string; capabilities: Record<string, unknown> };
    };
    const old = await capabilitiesFor('2025-06-18');
    expect(old.protocolVersion).toBe('2025-06-18');
    expect(old.capabilities.tasks).toBeUndefined();
    expect(old.capabilities.tools).toBeDefined();
    const current = await capabilitiesFor('2025-11-25');
    expect(current.capabilities.tasks).toMatchObject({ requests: { tools: { call: {} } } });
  });
});

describe('2026-07-28 edges', () => {
  it('C-44, C-50: tasks/update and tasks/cancel on an unknown id are -32602', async () => {
    expect((await rpc2026(running.url, 'tasks/update', { taskId: 'missing', inputResponses: {} })).error?.code).toBe(
      -32602,
    );
    expect((await rpc2026(running.url, 'tasks/cancel', { taskId: 'missing' })).error?.code).toBe(-32602);
  });

  it("C-63: another principal's tasks/update and tasks/cancel are -32602, and change nothing", async () => {
    const alice = { headers: { authorization: 'Bearer alice' } };
    const bob = { headers: { authorization: 'Bearer bob' } };
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'z' } },
      alice,
    );
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }, alice),
      (reply) => reply.result?.status === 'input_required',
    );
    const answer = { confirm: { action: 'accept', content: { confirm: true } } };
    expect((await rpc2026(running.url, 'tasks/update', { taskId, inputResponses: answer }, bob)).error?.code).toBe(
      -32602,
    );
    expect((await rpc2026(running.url, 'tasks/cancel', { taskId }, bob)).error?.code).toBe(-32602);
    expect((await rpc2026(running.url, 'tasks/get', { taskId }, alice)).result?.status).toBe('input_required');
    await rpc2026(running.url, 'tasks/cancel', { taskId }, alice);
  });

  it('C-31, C-3: tasks/get is a pure read, and results carry serverInfo', async () => {
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'r' },
    });
    const taskId = created.result?.taskId as string;
    const done = await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }),
      (reply) => reply.result?.status === 'completed',
    );
    const again = await rpc2026(running.url, 'tasks/get', { taskId });
    expect(again.result).toEqual(done.result);
    expect(again.result?._meta).toMatchObject({
      'io.modelcontextprotocol/serverInfo': { name: 'mcp-task-server-conformance-fixture' },
    });
  });

  it('C-14: a tasks/get without Mcp-Name, or without Mcp-Method, is refused with -32020 (HTTP 400)', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(running.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/get',
          params: {
            taskId: 'abc',
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
            },
          },
        }),
      });
    const variants: Record<string, string>[] = [{ 'mcp-method': 'tasks/get' }, { 'mcp-name': 'abc' }];
    for (const headers of variants) {
      const response = await post(headers);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32020);
    }
  });
});
