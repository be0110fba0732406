/**
 * The repo-scan example over stdio (2025-11-25), as a desktop host would start it: a child
 * process speaking MCP on stdin/stdout, driven by the v1 client.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
let client: Client;

/** The repo-scan example as a child process on stdio, scanning `scanRoot`. */
function repoScanOverStdio(scanRoot: string): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--conditions=mcp-task-server-source', '--import', 'tsx', 'examples/repo-scan/server.ts', '--stdio'],
    cwd: repoRoot,
    env: { ...(process.env as Record<string, string>), SCAN_ROOT: scanRoot, MCP_TASK_LOG_LEVEL: 'warn' },
    stderr: 'inherit',
  });
}

beforeAll(async () => {
  client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
  await client.connect(repoScanOverStdio(repoRoot));
}, 30_000);

afterAll(() => client?.close());

describe('repo-scan over stdio', () => {
  it('declares tasks including listing, since the local user owns them', async () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
  });

  it('runs a scan as a task to completion and lists it', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'scan_repository', arguments: { path: 'src', extensions: ['ts'] }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect((result.structuredContent as { files: number }).files).toBeGreaterThan(10);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toContain(created.task.taskId);
  });

  it('cancels a long scan', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'scan_repository', arguments: { path: '.', exclude: [] }, task: {} } },
      CreateTaskResultSchema,
    );
    expect((await client.experimental.tasks.cancelTask(created.task.taskId)).status).toBe('cancelled');
    const task = await pollUntil(
      () => client.experimental.tasks.getTask(created.task.taskId),
      (t) => t.status !== 'working',
    );
    expect(task.status).toBe('cancelled');
  });
});

describe('questions over stdio to a client that only polls', () => {
  let workspace: string;
  let poller: Client;
  const asked: { message: string; meta: unknown }[] = [];

  beforeAll(async () => {
    // Under the git-ignored .tmp/: the tool deletes what it finds once approved.
    await mkdir(path.join(repoRoot, '.tmp'), { recursive: true });
    workspace = await mkdtemp(path.join(repoRoot, '.tmp', 'stdio-clean-'));
    await mkdir(path.join(workspace, 'app/dist'), { recursive: true });
    await writeFile(path.join(workspace, 'app/dist/bundle.js'), 'x'.repeat(100));
    poller = new Client({ name: 'stdio-poller', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    poller.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({
        message: request.params.message,
        meta: request.params._meta?.['io.modelcontextprotocol/related-task'],
      });
      return { action: 'accept', content: { confirm: false } };
    });
    await poller.connect(repoScanOverStdio(workspace));
  }, 30_000);

  afterAll(async () => {
    await poller?.close();
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  it('asks on stdout outside any request, and the answer reaches the task', async () => {
    const created = await poller.request(
      { method: 'tools/call', params: { name: 'clean_build_outputs', arguments: { path: '.' }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await pollUntil(
      () => poller.experimental.tasks.getTask(taskId),
      (task) => task.status === 'completed',
    );
    expect(asked).toEqual([{ message: 'Delete 1 build folder, 100 B in all: app/dist (100 B)?', meta: { taskId } }]);
    const result = await poller.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect((result.structuredContent as { kept: unknown[] }).kept).toHaveLength(1);
    expect(await readdir(path.join(workspace, 'app'))).toEqual(['dist']);
  });
});
