/**
 * The fan-out example: a task that lists a tree once and hashes it in child tasks, one per
 * batch (`ctx.spawn`, `ctx.all`), with the children in the listing naming their parent.
 * Driven by the v1 SDK client.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RELATED_TASK_IDS_META_KEY, type TaskContext } from 'mcp-task-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectV1, type RunningServer, startServer } from '../../test/e2e/support.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { type BatchReport, type BatchRequest, Checksummer } from './src/checksummer.js';

/** A `tasks/list` result with each task's `_meta` kept. */
const RawTaskList = z.object({
  tasks: z.array(z.looseObject({ status: z.string(), _meta: z.record(z.string(), z.array(z.string())).optional() })),
});

const root = mkdtempSync(path.join(tmpdir(), 'fan-out-'));
const FILES = 57;

/** The real checksummer, noting each batch it hashes (by its first file). */
class ObservedChecksummer extends Checksummer {
  readonly batches: string[] = [];
  override async checksumBatch(request: BatchRequest, ctx: TaskContext): Promise<BatchReport> {
    this.batches.push(request.files[0] ?? '');
    return super.checksumBatch(request, ctx);
  }
}

let checksummer: ObservedChecksummer;
let running: RunningServer;
let client: Client;
let expectedDigest: string;

beforeAll(async () => {
  const names: string[] = [];
  for (let index = 0; index < FILES; index++) {
    const name = `dir${index % 3}/file-${String(index).padStart(2, '0')}.txt`;
    mkdirSync(path.join(root, 'tree', path.dirname(name)), { recursive: true });
    writeFileSync(path.join(root, 'tree', name), `file ${index}\n`.repeat(index + 1));
    names.push(name);
  }
  mkdirSync(path.join(root, 'tree', 'node_modules'));
  writeFileSync(path.join(root, 'tree', 'node_modules', 'skipped.js'), 'skipped');
  const digest = createHash('sha256');
  for (const name of names.sort()) {
    const sha = createHash('sha256')
      .update(readFileSync(path.join(root, 'tree', name)))
      .digest('hex');
    digest.update(`${name}:${sha}\n`);
  }
  expectedDigest = digest.digest('hex');

  checksummer = new ObservedChecksummer(root);
  running = await startServer({
    manifest: taskManifest,
    instances: [checksummer],
    // An identified caller, so the children can be listed.
    resolvePrincipal: () => 'tester',
  });
  client = await connectV1(running.url);
});

afterAll(async () => {
  await client?.close();
  await running?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('checksum_tree', () => {
  it('hashes every file in child tasks, one per batch, with one digest for the tree', async () => {
    checksummer.batches.length = 0;
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'checksum_tree', arguments: { path: 'tree', batchSize: 10 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ path: 'tree', files: FILES, batches: 6, digest: expectedDigest });
    // Six batches, each hashed once, as a child task of its own.
    expect(checksummer.batches).toHaveLength(6);
    // Read as sent: the SDK's Task schema drops keys it does not know.
    const listed = await client.request({ method: 'tasks/list', params: {} }, RawTaskList);
    const children = listed.tasks.filter(
      (task) => task._meta?.[RELATED_TASK_IDS_META_KEY]?.[0] === created.task.taskId,
    );
    expect(children).toHaveLength(6);
    expect(children.every((task) => task.status === 'completed')).toBe(true);
  });

  it('gives the same digest whatever the batch size', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'checksum_tree', arguments: { path: 'tree', batchSize: 25 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ files: FILES, batches: 3, digest: expectedDigest });
  });

  it('refuses a path outside its root', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'checksum_tree', arguments: { path: '../..' }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    await expect(
      client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({ message: expect.stringContaining('inside the server') });
  });
});
