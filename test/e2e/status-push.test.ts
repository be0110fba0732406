/**
 * Status pushed to clients: `notifications/tasks/status` to the 2025-11-25 session that owns a
 * task (2025-11-25 tasks), and `notifications/tasks` on a 2026-07-28
 * `subscriptions/listen` stream that asked for the task's id (docs/design/protocol-rules.md §5.7).
 */
import { CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import {
  connectV1,
  listenForTasks,
  pollUntil,
  type RunningServer,
  rpc2026,
  startServer,
  TASKS_EXTENSION,
} from './support.js';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
  });
});

afterAll(() => running?.close());

describe('2026-07-28: subscriptions/listen with taskIds', () => {
  it('acknowledges first, then pushes each change as tasks/get would show it, tagged with the subscription', async () => {
    const created = await rpc2026(running.url, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'x' } });
    const taskId = created.result?.taskId as string;
    const { stream } = await listenForTasks(running.url, [taskId, 'not-a-task'], { id: 77 });
    if (!stream) throw new Error('no stream');
    const ack = await stream.next();
    expect(ack).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 77 }, notifications: { taskIds: [taskId] } },
    });
    const waiting = await stream.next((m) => (m.params as { status?: string }).status === 'input_required');
    expect(waiting).toMatchObject({
      method: 'notifications/tasks',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 77 }, taskId, inputRequests: { confirm: {} } },
    });
    await rpc2026(running.url, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    const done = await stream.next((m) => (m.params as { status?: string }).status === 'completed');
    expect(done.params).toMatchObject({ result: { content: [{ type: 'text', text: 'Deleted x' }] } });
    stream.close();
  });

  it('refuses taskIds from a client without the extension (-32021, HTTP 400)', async () => {
    const reply = await listenForTasks(running.url, ['any'], { capabilities: {} });
    expect(reply.status).toBe(400);
    expect(reply.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it("agrees only to the caller's own tasks", async () => {
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 5, label: 'private' } },
      { headers: { authorization: 'Bearer alice' } },
    );
    const taskId = created.result?.taskId as string;
    const asBob = await listenForTasks(running.url, [taskId], { headers: { authorization: 'Bearer bob' } });
    expect((await asBob.stream?.next())?.params).toMatchObject({ notifications: { taskIds: [] } });
    asBob.stream?.close();
    await rpc2026(running.url, 'tasks/cancel', { taskId }, { headers: { authorization: 'Bearer alice' } });
  });
});

describe('2025-11-25: notifications/tasks/status', () => {
  it('tells the session that created a task about each status change', async () => {
    const client = await connectV1(running.url, { token: 'carol' });
    const seen: string[] = [];
    const metas: unknown[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      seen.push(n.params.status);
      metas.push(n.params._meta?.['io.modelcontextprotocol/related-task']);
    });
    const created = await client.request(
      { method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename: 'y' }, task: {} } },
      CreateTaskResultSchema,
    );
    await pollUntil(
      async () => seen,
      (s) => s.includes('input_required'),
    );
    await rpc2026(
      running.url,
      'tasks/update',
      { taskId: created.task.taskId, inputResponses: { confirm: { action: 'decline' } } },
      { headers: { authorization: 'Bearer carol' } },
    );
    await pollUntil(
      async () => seen,
      (s) => s.includes('completed'),
    );
    expect(seen).toEqual(['input_required', 'working', 'completed']);
    // B-51: status notifications carry no related-task _meta (docs/design/protocol-rules.md §4.9.5).
    expect(metas).toEqual([undefined, undefined, undefined]);
    await client.close();
  });
});
