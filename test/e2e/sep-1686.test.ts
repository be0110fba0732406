/**
 * The original SEP-1686 `_meta` form (docs/traceability.md rows A-*): served only when the app
 * enables it, and provably ignored otherwise. Driven by the v1 client with raw requests.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, openRawSession, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

const TASK = 'modelcontextprotocol.io/task';
const RELATED = 'modelcontextprotocol.io/related-task';
const AnyResult = z.looseObject({});
const TaskCreated = z.object({
  method: z.literal('notifications/tasks/created'),
  params: z.looseObject({ _meta: z.looseObject({}) }),
});

function callWithTask(
  client: Client,
  taskId: string,
  args: Record<string, unknown>,
  name = 'slow_compute',
  signal?: AbortSignal,
) {
  return client.request(
    { method: 'tools/call', params: { name, arguments: args, _meta: { [TASK]: { taskId, keepAlive: 60_000 } } } },
    CallToolResultSchema,
    { ...(signal && { signal }), timeout: 30_000 },
  );
}

const getTask = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/get', params: { taskId } }, AnyResult) as Promise<Record<string, unknown>>;

describe('SEP-1686 shim enabled', () => {
  let running: RunningServer;
  let client: Client;
  const created: unknown[] = [];

  beforeAll(async () => {
    running = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      sep1686: true,
    });
    client = await connectV1(running.url);
    client.setNotificationHandler(TaskCreated, (notification) => {
      created.push(notification.params._meta[RELATED]);
    });
  });

  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('creates the task under the client-chosen id, announces it, and answers the call when done', async () => {
    // While it runs (a task too long to end during the test, so no load makes this a race):
    // SEP-1686's fields, and no result yet.
    const stop = new AbortController();
    const long = callWithTask(client, 'a-running', { seconds: 60, label: 'r' }, 'slow_compute', stop.signal);
    const running_ = await pollUntil(
      () => getTask(client, 'a-running').catch((): Record<string, unknown> => ({})),
      (task) => task.taskId === 'a-running',
    );
    expect(['submitted', 'working']).toContain(running_.status);
    expect(running_).toMatchObject({
      keepAlive: 60_000,
      pollFrequency: 200,
      _meta: { [RELATED]: { taskId: 'a-running' } },
    });
    expect(running_.ttl).toBeUndefined();
    await expect(
      client.request({ method: 'tasks/result', params: { taskId: 'a-running' } }, AnyResult),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/not 'completed'/) });
    stop.abort();
    await long.catch(() => {});

    const result = await callWithTask(client, 'a-first', { seconds: 0.3, label: 'a' });
    expect(result.content).toEqual([{ type: 'text', text: 'Computed a in 0.3s' }]);
    expect(result._meta?.[RELATED]).toEqual({ taskId: 'a-first' });
    expect(created).toContainEqual({ taskId: 'a-first' });
    expect(await getTask(client, 'a-first')).toMatchObject({ status: 'completed', keepAlive: 60_000 });
    const stored = await client.request(
      { method: 'tasks/result', params: { taskId: 'a-first' } },
      CallToolResultSchema,
    );
    expect(stored.content).toEqual(result.content);
  });

  it('answers a repeat with the same idempotency key with the first task, under the id it chose', async () => {
    const call = (taskId: string) =>
      client.request(
        {
          method: 'tools/call',
          params: {
            name: 'slow_compute',
            arguments: { seconds: 0.3, label: 'keyed' },
            _meta: { [TASK]: { taskId, keepAlive: 60_000 }, 'mcp-task-server/idempotencyKey': 'sep-key-1' },
          },
        },
        CallToolResultSchema,
        { timeout: 30_000 },
      );
    const first = await call('k-first');
    const again = await call('k-second');
    expect(again.content).toEqual(first.content);
    expect(again._meta?.[RELATED]).toEqual({ taskId: 'k-first' });
    expect(created.filter((entry) => JSON.stringify(entry) === '{"taskId":"k-second"}')).toEqual([]);
    await expect(getTask(client, 'k-second')).rejects.toMatchObject({ code: -32602 });
  });

  it('refuses a taken id and a malformed one with -32602', async () => {
    await callWithTask(client, 'a-dup', { seconds: 0, label: 'dup' });
    await expect(callWithTask(client, 'a-dup', { seconds: 0, label: 'dup' })).rejects.toMatchObject({ code: -32602 });
    await expect(callWithTask(client, 'has space', { seconds: 0, label: 'x' })).rejects.toMatchObject({ code: -32602 });
  });

  it('cancels the task when the client cancels the original request', async () => {
    const controller = new AbortController();
    const call = callWithTask(client, 'a-cancel', { seconds: 60, label: 'c' }, 'slow_compute', controller.signal);
    await pollUntil(
      () => getTask(client, 'a-cancel').catch((): Record<string, unknown> => ({})),
      (task) => task.taskId === 'a-cancel',
    );
    controller.abort('user gave up');
    await expect(call).rejects.toThrow();
    const task = await pollUntil(
      () => getTask(client, 'a-cancel'),
      (t) => t.status !== 'working' && t.status !== 'submitted',
    );
    expect(task.status).toBe('cancelled');
  });

  it('ends the wait, not the task, when the client hangs up on the original request', async () => {
    const session = await openRawSession(running.url);
    const controller = new AbortController();
    const call = fetch(running.url, {
      method: 'POST',
      headers: session,
      signal: controller.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'slow_compute',
          arguments: { seconds: 60, label: 'hung-up' },
          _meta: { [TASK]: { taskId: 'a-hangup', keepAlive: 60_000 } },
        },
      }),
    }).catch(() => undefined);
    await pollUntil(
      async () => running.server.stats(),
      (stats) => stats.waiters.total.result === 1 && stats.engine.waiters === 1,
    );
    controller.abort();
    await call;
    // Nothing waits for the task any more...
    await pollUntil(
      async () => running.server.stats(),
      (stats) => stats.waiters.total.result === 0 && stats.engine.waiters === 0,
    );
    // ...and the task goes on: hanging up is not cancelling.
    const again = await fetch(running.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: 'a-hangup' } }),
    });
    const text = await again.text();
    expect(text).toMatch(/"status":"(working|submitted)"/);
    await fetch(running.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tasks/delete', params: { taskId: 'a-hangup' } }),
    }).then((response) => response.text());
  });

  it('fails with the JSON-RPC error the task raised, and tasks/get carries it', async () => {
    await expect(callWithTask(client, 'a-fail', {}, 'protocol_error_job')).rejects.toMatchObject({ code: -32603 });
    expect(await getTask(client, 'a-fail')).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/on purpose/),
    });
  });

  it('deletes a task on tasks/delete', async () => {
    await callWithTask(client, 'a-delete', { seconds: 0, label: 'd' });
    expect(await client.request({ method: 'tasks/delete', params: { taskId: 'a-delete' } }, AnyResult)).toEqual({});
    await expect(getTask(client, 'a-delete')).rejects.toMatchObject({ code: -32602 });
  });

  it('still serves the 2025-11-25 core form beside it, in its own fields', async () => {
    const b = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'b' }, task: {} } },
      z.looseObject({ task: z.looseObject({ taskId: z.string() }) }),
    );
    const task = await getTask(client, b.task.taskId);
    expect(task).toMatchObject({ ttl: expect.any(Number) });
    expect(task.keepAlive).toBeUndefined();
  });
});

describe('SEP-1686 shim: listing, queueing, tool errors and the 2026 wire', () => {
  let running: RunningServer;
  let client: Client;

  beforeAll(async () => {
    running = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      sep1686: true,
      // One task at a time, so a second one visibly waits; an identified caller, so listing is offered.
      workers: 1,
      resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
    });
    client = await connectV1(running.url, { token: 'lister' });
  });

  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('A-12: a task nothing has happened to yet is submitted', async () => {
    // The blocker holds the only slot for a few seconds, so the next task has to wait.
    const blocker = callWithTask(client, 'a-blocker', { seconds: 3, label: 'blocker' });
    await pollUntil(
      () => getTask(client, 'a-blocker').catch((): Record<string, unknown> => ({})),
      (task) => task.status !== undefined && task.status !== 'submitted',
    );
    const queued = callWithTask(client, 'a-queued', { seconds: 0, label: 'queued' });
    const waiting = await pollUntil(
      () => getTask(client, 'a-queued').catch((): Record<string, unknown> => ({})),
      (task) => task.taskId === 'a-queued',
    );
    expect(waiting.status).toBe('submitted');
    await Promise.all([blocker, queued]);
    expect((await getTask(client, 'a-queued')).status).toBe('completed');
  });

  it('A-9, A-10: lists each task in the fields of the dialect that created it; a bad cursor is -32602', async () => {
    // Its own SEP-1686 task: the test must not depend on what another test left behind.
    await callWithTask(client, 'a-listed', { seconds: 0, label: 'listed' });
    const b = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'b' }, task: {} } },
      z.looseObject({ task: z.looseObject({ taskId: z.string() }) }),
    );
    const listed = (await client.request({ method: 'tasks/list', params: {} }, AnyResult)) as {
      tasks: Record<string, unknown>[];
    };
    const byId = Object.fromEntries(listed.tasks.map((task) => [task.taskId, task]));
    expect(byId['a-listed']).toMatchObject({ keepAlive: 60_000 });
    expect(byId['a-listed']?.ttl).toBeUndefined();
    expect(byId[b.task.taskId]).toMatchObject({ ttl: expect.any(Number) });
    expect(byId[b.task.taskId]?.keepAlive).toBeUndefined();
    await expect(
      client.request({ method: 'tasks/list', params: { cursor: 'bogus' } }, AnyResult),
    ).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('A-19: a tool error leaves the task completed, and the call answers with the isError result', async () => {
    const result = await callWithTask(client, 'a-tool-error', {}, 'failing_job');
    expect(result.isError).toBe(true);
    expect(await getTask(client, 'a-tool-error')).toMatchObject({ status: 'completed' });
  });

  it("A-20: asks the task's questions on the original call, tagged with the task", async () => {
    const asker = await connectV1(running.url, { token: 'lister', capabilities: { elicitation: {} } });
    const asked: unknown[] = [];
    asker.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params._meta?.[RELATED]);
      return { action: 'accept', content: { confirm: true } };
    });
    const result = await callWithTask(asker, 'a-question', { filename: 'q.txt' }, 'confirm_delete');
    expect(result.content).toEqual([{ type: 'text', text: 'Deleted q.txt' }]);
    expect(asked).toEqual([{ taskId: 'a-question' }]);
    await asker.close();
  });

  it('A-24: the shim lives on 2025-era connections only; on 2026-07-28 the _meta key is ignored', async () => {
    const reply = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'modern' },
      _meta: { [TASK]: { taskId: 'a-modern' } },
    });
    expect(reply.result?.resultType).toBe('task');
    expect(reply.result?.taskId).not.toBe('a-modern');
    await expect(getTask(client, 'a-modern')).rejects.toMatchObject({ code: -32602 });
  });
});

describe('SEP-1686 shim disabled (the default)', () => {
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

  it('ignores the _meta key and processes the call normally', async () => {
    let announced = false;
    client.setNotificationHandler(TaskCreated, () => {
      announced = true;
    });
    const result = await callWithTask(client, 'ignored-id', { seconds: 0, label: 'plain' });
    expect(result.content).toEqual([{ type: 'text', text: 'Computed plain in 0s' }]);
    expect(result._meta?.[RELATED]).toBeUndefined();
    await expect(getTask(client, 'ignored-id')).rejects.toMatchObject({ code: -32602 });
    await expect(client.request({ method: 'tasks/delete', params: { taskId: 'x' } }, AnyResult)).rejects.toMatchObject({
      code: -32601,
    });
    expect(announced).toBe(false);
  });
});
