/**
 * Runs the app as its users do: `src/server.ts` in a process of its own on a free port, driven by
 * the v1 SDK client (protocol 2025-11-25) over Streamable HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type GetTaskResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: ChildProcess;
let client: Client;

beforeAll(async () => {
  server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', MCP_TASK_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (\S+)/.exec(output);
      if (listening) resolve(listening[1]!);
    });
    server.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
  client = new Client({ name: 'app-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
}, 30_000);

afterAll(async () => {
  await client?.close();
  server?.kill('SIGTERM');
});

async function startBrew(args: { drink: string; seconds?: number }): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'brew', arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function waitFor(taskId: string, done: (task: GetTaskResult) => boolean): Promise<GetTaskResult> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is still ${task.status}: ${task.statusMessage}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('brew', () => {
  it('runs as a task: start, poll until completed, collect the result', async () => {
    const taskId = await startBrew({ drink: 'tea', seconds: 1 });
    expect((await waitFor(taskId, (task) => task.status !== 'working')).status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ served: 'tea', seconds: 1 });
  });

  it('reports progress, and stops when cancelled', async () => {
    const taskId = await startBrew({ drink: 'coffee', seconds: 600 });
    const brewing = await waitFor(taskId, (task) => task.statusMessage === 'brewing coffee');
    expect(brewing.status).toBe('working');
    expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
  });

  it('refuses arguments outside the schema', async () => {
    await expect(client.callTool({ name: 'brew', arguments: { drink: 'tea', seconds: 0 } })).rejects.toMatchObject({
      code: -32602,
    });
  });
});
