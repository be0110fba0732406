/**
 * The fan-out example: batches hashed in parallel lanes, each batch a `ctx.step`, progress as
 * files done out of files in all, over a plain call and as a task. Driven by the v1 SDK client.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import type { TaskContext } from 'mcp-task-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV1, type RunningServer, startServer } from '../../test/e2e/support.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { Checksummer, type ChecksumReport, type ChecksumRequest } from './src/checksummer.js';

const root = mkdtempSync(path.join(tmpdir(), 'fan-out-'));
const FILES = 57;

/** The real checksummer, noting each step it runs, in order. */
class ObservedChecksummer extends Checksummer {
  readonly steps: string[] = [];
  override async checksumTree(request: ChecksumRequest, ctx: TaskContext): Promise<ChecksumReport> {
    const step = ctx.step.bind(ctx);
    return super.checksumTree(request, {
      ...ctx,
      step: (name, run) => {
        this.steps.push(name);
        return step(name, run);
      },
      progress: ctx.progress.bind(ctx),
    } as TaskContext);
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
  running = await startServer({ manifest: taskManifest, instances: [checksummer] });
  client = await connectV1(running.url);
});

afterAll(async () => {
  await client?.close();
  await running?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('checksum_tree', () => {
  it('hashes every file in batches, with one digest for the tree and progress as a fraction', async () => {
    const updates: Progress[] = [];
    checksummer.steps.length = 0;
    const result = await client.callTool(
      { name: 'checksum_tree', arguments: { path: 'tree', parallel: 3, batchSize: 10 } },
      CallToolResultSchema,
      { onprogress: (progress) => updates.push(progress) },
    );
    expect(result.structuredContent).toMatchObject({ path: 'tree', files: FILES, batches: 6, digest: expectedDigest });

    // The listing first, then one step per batch.
    expect(checksummer.steps[0]).toBe('list');
    expect([...checksummer.steps.slice(1)].sort()).toEqual([
      'batch-0',
      'batch-1',
      'batch-2',
      'batch-3',
      'batch-4',
      'batch-5',
    ]);

    // Progress counts files out of all of them, never backwards, ending at the whole.
    expect(updates.length).toBeGreaterThan(1);
    expect(updates.every((update) => update.total === FILES)).toBe(true);
    const values = updates.map((update) => update.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(values.at(-1)).toBe(FILES);
    expect(updates.at(-1)?.message).toBe(`${FILES} of ${FILES} files`);
  });

  it('gives the same digest as a task, whatever the parallelism', async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'checksum_tree', arguments: { path: 'tree', parallel: 1 }, task: { ttl: 60_000 } },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ files: FILES, batches: 3, digest: expectedDigest });
  });

  it('refuses a path outside its root', async () => {
    await expect(client.callTool({ name: 'checksum_tree', arguments: { path: '../..' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('inside the server'),
    });
  });
});
