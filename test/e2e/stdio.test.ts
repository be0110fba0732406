/**
 * The repo-scan example over stdio (2025-11-25), as a desktop host would start it: a child
 * process speaking MCP on stdin/stdout, driven by the v1 client.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
let client: Client;

beforeAll(async () => {
  client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=mcp-task-server-source', '--import', 'tsx', 'examples/repo-scan/server.ts', '--stdio'],
      cwd: repoRoot,
      env: { ...(process.env as Record<string, string>), SCAN_ROOT: repoRoot, MCP_TASK_LOG_LEVEL: 'warn' },
      stderr: 'inherit',
    }),
  );
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
