/**
 * Runs the server the way a desktop client does: as a child process spoken to over stdio, here by
 * the v1 SDK client (protocol 2025-11-25), on a folder of files made for the test.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let client: Client;
const folder = mkdtempSync(path.join(tmpdir(), 'line-counter-'));

beforeAll(async () => {
  mkdirSync(path.join(folder, 'src'));
  mkdirSync(path.join(folder, 'node_modules'));
  writeFileSync(path.join(folder, 'a.txt'), 'one\ntwo\n');
  writeFileSync(path.join(folder, 'src', 'b.ts'), 'export const b = 1;\n\nexport const c = 2;'); // no final newline
  writeFileSync(path.join(folder, 'node_modules', 'skipped.js'), 'x\n'.repeat(100));
  writeFileSync(path.join(folder, '.hidden'), 'x\n');

  client = new Client({ name: 'app-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/server.ts'],
      // Errors only: the expected tool failure below would log a warning.
      env: { ...(process.env as Record<string, string>), MCP_TASK_LOG_LEVEL: 'error' },
    }),
  );
}, 30_000);

afterAll(async () => {
  await client?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('count_lines over stdio', () => {
  it('answers a plain call, as clients without tasks make it', async () => {
    const result = await client.callTool({ name: 'count_lines', arguments: { directory: folder } });
    expect(result.structuredContent).toEqual({ directory: folder, files: 2, lines: 5, truncated: false });
  });

  it('runs as a task for clients with tasks: start, then collect the result', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'count_lines', arguments: { directory: folder, maxFiles: 1 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ directory: folder, files: 1, lines: 2, truncated: true });
  });

  it('ends with a tool error the model can read when the folder does not exist', async () => {
    const result = await client.callTool({ name: 'count_lines', arguments: { directory: path.join(folder, 'nope') } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('ENOENT');
  });
});

describe('README.md', () => {
  it('has JSON for a desktop client config that starts the compiled server with node', () => {
    const readme = readFileSync('README.md', 'utf8');
    const snippets = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!));
    expect(snippets.length).toBeGreaterThan(0);
    for (const snippet of snippets) {
      const servers = snippet.mcpServers ?? snippet.servers;
      expect(servers['my-task-server']).toMatchObject({
        command: 'node',
        args: [expect.stringMatching(/dist\/server\.js$/)],
      });
    }
  });
});
