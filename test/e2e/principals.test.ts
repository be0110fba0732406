/**
 * Tasks belong to identities, not sessions (see docs/traceability.md):
 * two principals side by side over HTTP, listing with opaque cursors, and reconnects.
 */
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, type RunningServer, rpc2026, startServer } from './support.js';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    listPageSize: 2,
    // Tests trust a bearer token as the principal's name; real apps verify tokens (`http.auth`).
    resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
  });
});

afterAll(() => running?.close());

async function createFor(token: string, label: string): Promise<string> {
  const client = await connectV1(running.url, { token });
  try {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label }, task: {} } },
      CreateTaskResultSchema,
    );
    return created.task.taskId;
  } finally {
    await client.close();
  }
}

describe('task ownership', () => {
  it("keeps one principal's tasks invisible to another, in both dialects", async () => {
    const taskId = await createFor('alice', 'mine');
    const bob = await connectV1(running.url, { token: 'bob' });
    await expect(bob.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await expect(bob.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject({
      code: -32602,
    });
    await expect(bob.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await bob.close();
    const asBob = await rpc2026(running.url, 'tasks/get', { taskId }, { headers: { authorization: 'Bearer bob' } });
    expect(asBob.error?.code).toBe(-32602);
    const asAlice = await rpc2026(running.url, 'tasks/get', { taskId }, { headers: { authorization: 'Bearer alice' } });
    expect(asAlice.result?.taskId).toBe(taskId);
  });

  it('survives a reconnect: a new session of the same principal reads the task and its result', async () => {
    const taskId = await createFor('carol', 'reconnect');
    const again = await connectV1(running.url, { token: 'carol' });
    const result = await again.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Computed reconnect in 0s' }]);
    await again.close();
  });

  it('lists only the caller’s tasks, page by page, and rejects a forged cursor', async () => {
    const mine = [await createFor('dave', 'l1'), await createFor('dave', 'l2'), await createFor('dave', 'l3')];
    await createFor('erin', 'other');
    const dave = await connectV1(running.url, { token: 'dave' });
    expect(dave.getServerCapabilities()?.tasks?.list).toEqual({});
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await dave.experimental.tasks.listTasks(cursor);
      seen.push(...page.tasks.map((task) => task.taskId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen.sort()).toEqual([...mine].sort());
    expect(pages).toBe(2);
    await expect(dave.experimental.tasks.listTasks('forged')).rejects.toMatchObject({ code: -32602 });
    await dave.close();
  });
});
