/**
 * The dashboard shows the family: a parent's detail lists its children (key, id, tool, how
 * each ended) and a child's detail links its parent; another principal sees neither.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { tokenAuth } from '../observe/ops-app.js';
import { childrenManifest, Fanner } from './children-app.js';

const TOKENS = { 'token-ann': 'ann', 'token-bob': 'bob' };
let running: RunningServer;
let ann: Client;
let base: string;

/** The part of the dashboard's task detail this test reads. */
interface TaskDetail {
  readonly task: {
    readonly children?: readonly { readonly key: string; readonly taskId: string; readonly tool: string }[];
    readonly parent?: string;
    readonly timeline: readonly unknown[];
  };
}

async function detail(taskId: string, token: string) {
  const response = await fetch(`${base}/dashboard/api/tasks/${encodeURIComponent(taskId)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as TaskDetail };
}

beforeAll(async () => {
  running = await startServer({
    manifest: childrenManifest,
    instances: [new Fanner()],
    http: { auth: tokenAuth(TOKENS) },
    dashboard: {},
  });
  base = new URL(running.url).origin;
  ann = await connectV1(running.url, { token: 'token-ann' });
});

afterAll(async () => {
  await ann?.close();
  await running?.close();
});

it('lists a parent’s children and links a child to its parent, for their principal only', async () => {
  const created = await ann.request(
    { method: 'tools/call', params: { name: 'fan', arguments: { parts: 2 }, task: {} } },
    CreateTaskResultSchema,
  );
  const parentId = created.task.taskId;
  await pollUntil(
    () => ann.experimental.tasks.getTask(parentId),
    (task) => task.status === 'completed',
  );
  const parent = await detail(parentId, 'token-ann');
  expect(parent.status).toBe(200);
  expect(parent.body.task.children).toEqual([
    { key: 'part', taskId: expect.any(String), tool: 'part', ended: 'completed' },
    { key: 'part#2', taskId: expect.any(String), tool: 'part', ended: 'completed' },
  ]);
  const childId = parent.body.task.children?.[0]?.taskId as string;
  const child = await detail(childId, 'token-ann');
  expect(child.body.task.parent).toBe(parentId);
  expect(child.body.task.timeline.length).toBeGreaterThan(0);
  expect((await detail(childId, 'token-bob')).status).toBe(404);
  expect((await detail(parentId, 'token-bob')).status).toBe(404);
});
