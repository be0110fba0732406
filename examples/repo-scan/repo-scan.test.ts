/**
 * The repository-scan example driven by real clients: the v1 SDK client (2025-11-25 core
 * tasks) over Streamable HTTP and raw 2026-07-28 requests (tasks extension). Protocol rules: docs/traceability.md, rows B-* and C-*.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { TaskContext } from 'mcp-task-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV1, pollUntil, type RunningServer, rpc2026, startServer } from '../../test/e2e/support.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { RepoScanner, type ScanReport, type ScanRequest } from './src/repo-scanner.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The real scanner, plus a note of whether its run ended with the abort signal raised. */
class ObservedScanner extends RepoScanner {
  readonly sawAbort: boolean[] = [];
  override async scanRepository(request: ScanRequest, ctx: TaskContext): Promise<ScanReport> {
    try {
      return await super.scanRepository(request, ctx);
    } finally {
      this.sawAbort.push(ctx.signal.aborted);
    }
  }
}

let sample: string;
let scanner: ObservedScanner;
let running: RunningServer;
let client: Client;

beforeAll(async () => {
  // The scan root holds a small known tree (for exact results) and is the repository itself
  // for the slow scans (node_modules: tens of thousands of files).
  // Under the git-ignored .tmp/, never loose in the repository root.
  await mkdir(path.join(repoRoot, '.tmp'), { recursive: true });
  sample = await mkdtemp(path.join(repoRoot, '.tmp', 'scan-'));
  await mkdir(path.join(sample, 'src'));
  await writeFile(path.join(sample, 'src', 'a.ts'), 'export const a = 1;\nexport const b = 2;\n');
  await writeFile(path.join(sample, 'src', 'b.ts'), 'export const c = 3;\n');
  await writeFile(path.join(sample, 'README.md'), '# Sample\n\nText\n');
  scanner = new ObservedScanner(repoRoot);
  running = await startServer({ manifest: taskManifest, instances: [scanner] });
  client = await connectV1(running.url);
});

afterAll(async () => {
  await client?.close();
  await running?.close();
  await rm(sample, { recursive: true, force: true });
});

const samplePath = () => path.relative(repoRoot, sample);

describe('repo-scan over 2025-11-25 with the v1 client', () => {
  it('lists both tools with their task support', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.scan_repository?.execution).toEqual({ taskSupport: 'optional' });
    expect(byName.list_directories?.execution).toEqual({ taskSupport: 'forbidden' });
    expect(byName.scan_repository?.outputSchema).toMatchObject({ type: 'object' });
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ cancel: {}, requests: { tools: { call: {} } } });
  });

  it('starts a task, polls it to completed, and fetches its structured result', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'scan_repository', arguments: { path: samplePath() }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 500 });
    const done = await pollUntil(
      () => client.experimental.tasks.getTask(created.task.taskId),
      (task) => task.status !== 'working',
    );
    expect(done.status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: created.task.taskId });
    expect(result.structuredContent).toMatchObject({ files: 3, lines: 6, path: samplePath() });
    expect((result.structuredContent as unknown as ScanReport).byExtension.map((e) => e.extension)).toEqual([
      'md',
      'ts',
    ]);
  });

  it('runs the same tool inline when called without a task', async () => {
    const result = await client.callTool({
      name: 'scan_repository',
      arguments: { path: samplePath(), extensions: ['ts'] },
    });
    expect(result.structuredContent).toMatchObject({ files: 2, lines: 3 });
  });

  it('streams a task with callToolStream: created, statuses, result', async () => {
    const seen: string[] = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'scan_repository', arguments: { path: samplePath() } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      seen.push(message.type);
      if (message.type === 'result') expect(message.result.structuredContent).toMatchObject({ files: 3 });
    }
    expect(seen[0]).toBe('taskCreated');
    expect(seen.at(-1)).toBe('result');
  });

  it('cancels a running scan: the task is cancelled before the reply and the method sees the abort', async () => {
    const statuses: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      statuses.push(`${n.params.taskId}:${n.params.status}`);
    });
    const before = scanner.sawAbort.length;
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'scan_repository', arguments: { path: '.', exclude: [] }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await pollUntil(
      async () => scanner.sawAbort.length,
      (n) => n > before,
    );
    expect(scanner.sawAbort.at(-1)).toBe(true);
    // Still cancelled after the method has returned (terminal is sticky), and cancelling again is -32602.
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
    await pollUntil(
      async () => statuses,
      (s) => s.includes(`${taskId}:cancelled`),
    );
  });

  it("keeps the call's progress token alive for the task: numeric progress arrives as notifications", async () => {
    const seen: { progress: number; message?: string }[] = [];
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'scan_repository', arguments: { path: '.', exclude: [] }, task: {} },
      },
      CreateTaskResultSchema,
      { onprogress: (progress) => seen.push(progress) },
    );
    await pollUntil(
      async () => seen.length,
      (count) => count >= 2,
    );
    expect(seen[1]?.progress).toBeGreaterThan(seen[0]?.progress ?? 0);
    expect(seen[0]?.message).toMatch(/^scanned \d+ files/);
    await client.experimental.tasks.cancelTask(created.task.taskId);
  });

  it('answers -32602 for an unknown task id', async () => {
    await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toMatchObject({ code: -32602 });
    await expect(client.experimental.tasks.cancelTask('no-such-task')).rejects.toMatchObject({ code: -32602 });
  });

  it('answers -32601 for a task-augmented call of a tool that forbids tasks', async () => {
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'list_directories', arguments: {}, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32601 });
  });

  it('refuses a path outside the scan root with the JSON-RPC error the method threw', async () => {
    await expect(client.callTool({ name: 'scan_repository', arguments: { path: '../..' } })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it('rejects invalid arguments before any task is created', async () => {
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'scan_repository', arguments: { path: 42 }, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/path/) });
  });
});

describe('repo-scan over 2026-07-28 with raw HTTP', () => {
  it('creates a task, polls tasks/get until the result is inlined', async () => {
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'scan_repository',
      arguments: { path: samplePath() },
    });
    expect(created.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
    });
    // The configured 500 ms at most: once the server has seen runs of the tool, it suggests less.
    expect(created.result?.pollIntervalMs).toBeLessThanOrEqual(500);
    const taskId = created.result?.taskId as string;
    const done = await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }),
      (reply) => reply.result?.status !== 'working',
    );
    expect(done.result).toMatchObject({ resultType: 'complete', status: 'completed' });
    expect((done.result?.result as { structuredContent: ScanReport } | undefined)?.structuredContent).toMatchObject({
      files: 3,
      lines: 6,
    });
  });

  it('acknowledges a cancel and the task ends cancelled', async () => {
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'scan_repository',
      arguments: { path: '.', exclude: [] },
    });
    const taskId = created.result?.taskId as string;
    const ack = await rpc2026(running.url, 'tasks/cancel', { taskId });
    expect(ack.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    expect((await rpc2026(running.url, 'tasks/get', { taskId })).result?.status).toBe('cancelled');
  });
});
