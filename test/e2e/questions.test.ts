/**
 * Questions asked mid-task (@NeedsInput), answered by real clients in both dialects:
 * 2025-11-25 through `elicitation/create` on the `tasks/result` stream,
 * 2026-07-28 through `inputRequests` and `tasks/update` (§5.4, §5.5).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { taskManifest as fixtureManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { taskManifest as scanManifest } from '../../examples/repo-scan/src/__generated__/tasks.generated.js';
import { RepoScanner } from '../../examples/repo-scan/src/repo-scanner.js';
import { connectV1, pollUntil, type RpcReply, type RunningServer, rpc2026, startServer } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
let fixture: RunningServer;
let scan: RunningServer;
let workspace: string;

beforeAll(async () => {
  fixture = await startServer({ manifest: fixtureManifest, instances: [new FixtureTools(), new GeneralTools()] });
  // Under the git-ignored .tmp/, never loose in the repository root.
  await mkdir(path.join(repoRoot, '.tmp'), { recursive: true });
  workspace = await mkdtemp(path.join(repoRoot, '.tmp', 'clean-'));
  scan = await startServer({ manifest: scanManifest, instances: [new RepoScanner(workspace)] });
});

afterAll(async () => {
  await Promise.all([fixture?.close(), scan?.close()]);
  await rm(workspace, { recursive: true, force: true });
});

/** A v1 client that answers every elicitation with `answer(message)` and keeps what it was asked. */
async function answeringClient(url: string, answer: (message: string) => ElicitResult) {
  const client = await connectV1(url, { capabilities: { elicitation: {} } });
  const asked: { message: string; relatedTask: unknown }[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push({
      message: request.params.message,
      relatedTask: request.params._meta?.['io.modelcontextprotocol/related-task'],
    });
    return answer(request.params.message);
  });
  return { client, asked };
}

async function startTask(client: Client, name: string, args: Record<string, unknown> = {}) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

describe('2025-11-25: elicitation on the tasks/result stream (v1 client)', () => {
  it('asks one question with the related task, and the answer completes the task', async () => {
    const { client, asked } = await answeringClient(fixture.url, () => ({
      action: 'accept',
      content: { confirm: true },
    }));
    const taskId = await startTask(client, 'confirm_delete', { filename: 'a.txt' });
    await pollUntil(
      () => client.experimental.tasks.getTask(taskId),
      (task) => task.status === 'input_required',
    );
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(text(result)).toBe('Deleted a.txt');
    expect(asked).toEqual([{ message: 'Delete a.txt?', relatedTask: { taskId } }]);
    await client.close();
  });

  it('asks questions in turn and two at once, through callToolStream', async () => {
    const { client, asked } = await answeringClient(fixture.url, (message) => ({
      action: 'accept',
      content: { name: message.startsWith('First') ? 'Ada' : message.startsWith('Second') ? 'Grace' : 'Lovelace' },
    }));
    await client.listTools();
    const results: string[] = [];
    for (const name of ['ask_in_turn', 'multi_input']) {
      for await (const message of client.experimental.tasks.callToolStream(
        { name, arguments: {} },
        CallToolResultSchema,
      )) {
        if (message.type === 'result') results.push(text(message.result) as string);
        if (message.type === 'error') throw message.error;
      }
    }
    expect(results).toEqual(['Hello, Ada Lovelace!', 'Hello, Ada and Grace!']);
    expect(asked.map((q) => q.message)).toEqual(['First name?', 'Last name of Ada?', 'First name?', 'Second name?']);
    await client.close();
  });

  it('hands a decline to the method', async () => {
    const { client } = await answeringClient(fixture.url, () => ({ action: 'decline' }));
    const taskId = await startTask(client, 'confirm_delete', { filename: 'b.txt' });
    expect(text(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toBe('Kept b.txt');
    await client.close();
  });

  it('asks again after an answer that does not fit the question', async () => {
    let tries = 0;
    const { client, asked } = await answeringClient(fixture.url, () =>
      ++tries === 1
        ? { action: 'accept', content: { confirm: 'yes please' } }
        : { action: 'accept', content: { confirm: true } },
    );
    const taskId = await startTask(client, 'confirm_delete', { filename: 'c.txt' });
    expect(text(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toBe('Deleted c.txt');
    expect(asked).toHaveLength(2);
    await client.close();
  });

  it('cancels a task while it waits for an answer', async () => {
    const { client } = await answeringClient(fixture.url, () => ({ action: 'accept', content: { confirm: true } }));
    const taskId = await startTask(client, 'confirm_delete', { filename: 'd.txt' });
    await pollUntil(
      () => client.experimental.tasks.getTask(taskId),
      (task) => task.status === 'input_required',
    );
    expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await client.close();
  });

  it('asks inline, on the call itself, when the tool is called without a task', async () => {
    const { client, asked } = await answeringClient(fixture.url, () => ({
      action: 'accept',
      content: { confirm: false },
    }));
    const result = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'e.txt' } });
    expect(text(result as { content?: unknown })).toBe('Kept e.txt');
    expect(asked.map((q) => q.message)).toEqual(['Delete e.txt?']);
    await client.close();
  });
});

describe('2026-07-28: inputRequests and tasks/update (raw HTTP)', () => {
  const get = (url: string, taskId: string) => rpc2026(url, 'tasks/get', { taskId });
  const until = (url: string, taskId: string, done: (reply: RpcReply) => boolean) =>
    pollUntil(() => get(url, taskId), done);

  it('shows the question in tasks/get and resumes after tasks/update', async () => {
    const created = await rpc2026(fixture.url, 'tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'f.txt' },
    });
    const taskId = created.result?.taskId as string;
    const waiting = await until(fixture.url, taskId, (r) => r.result?.status === 'input_required');
    expect(waiting.result?.inputRequests).toEqual({
      confirm: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Delete f.txt?',
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', description: 'Delete the file?' } },
            required: ['confirm'],
          },
        },
      },
    });
    const ack = await rpc2026(fixture.url, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.result?.resultType).toBe('complete');
    const done = await until(fixture.url, taskId, (r) => r.result?.status === 'completed');
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'Deleted f.txt' }] });
  });

  it('takes a partial answer: the answered key leaves, the task keeps waiting for the other', async () => {
    const created = await rpc2026(fixture.url, 'tools/call', { name: 'multi_input', arguments: {} });
    const taskId = created.result?.taskId as string;
    await until(fixture.url, taskId, (r) => Object.keys(r.result?.inputRequests ?? {}).length === 2);
    await rpc2026(fixture.url, 'tasks/update', {
      taskId,
      inputResponses: { first: { action: 'accept', content: { name: 'Ada' } } },
    });
    const partial = await get(fixture.url, taskId);
    expect(partial.result?.status).toBe('input_required');
    expect(Object.keys(partial.result?.inputRequests as object)).toEqual(['second']);
    await rpc2026(fixture.url, 'tasks/update', {
      taskId,
      inputResponses: { second: { action: 'accept', content: { name: 'Grace' } }, stale: { action: 'accept' } },
    });
    const done = await until(fixture.url, taskId, (r) => r.result?.status === 'completed');
    expect(done.result?.result).toMatchObject({ content: [{ text: 'Hello, Ada and Grace!' }] });
  });

  it('refuses an invalid answer in statusMessage and keeps the question; takes a decline', async () => {
    const created = await rpc2026(fixture.url, 'tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'g.txt' },
    });
    const taskId = created.result?.taskId as string;
    await until(fixture.url, taskId, (r) => r.result?.status === 'input_required');
    await rpc2026(fixture.url, 'tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { confirm: 'maybe' } } },
    });
    const refused = await get(fixture.url, taskId);
    expect(refused.result?.status).toBe('input_required');
    expect(refused.result?.statusMessage).toMatch(/'confirm' was not accepted: confirm: /);
    expect(Object.keys(refused.result?.inputRequests as object)).toEqual(['confirm']);
    await rpc2026(fixture.url, 'tasks/update', { taskId, inputResponses: { confirm: { action: 'decline' } } });
    const done = await until(fixture.url, taskId, (r) => r.result?.status === 'completed');
    expect(done.result?.result).toMatchObject({ content: [{ text: 'Kept g.txt' }] });
  });

  it('withdraws the questions of a task cancelled while it waits', async () => {
    const created = await rpc2026(fixture.url, 'tools/call', { name: 'ask_in_turn', arguments: {} });
    const taskId = created.result?.taskId as string;
    await until(fixture.url, taskId, (r) => r.result?.status === 'input_required');
    await rpc2026(fixture.url, 'tasks/cancel', { taskId });
    const cancelled = await get(fixture.url, taskId);
    expect(cancelled.result?.status).toBe('cancelled');
    expect(cancelled.result?.inputRequests).toBeUndefined();
  });

  it('asks a client without the extension through multi-round-trip requests on the call', async () => {
    const first = await rpc2026(
      fixture.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'h.txt' } },
      { capabilities: { elicitation: {} } },
    );
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    expect(first.result?.taskId).toBeUndefined();
    const second = await rpc2026(
      fixture.url,
      'tools/call',
      {
        name: 'confirm_delete',
        arguments: { filename: 'h.txt' },
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        // The round's state names the task the first round started (the client echoes it).
        requestState: first.result?.requestState,
      },
      { capabilities: { elicitation: {} } },
    );
    expect(second.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Deleted h.txt' }] });
  });
});

describe('the repo-scan example: cleaning build folders behind an approval', () => {
  beforeEach(async () => {
    for (const folder of ['app/dist', 'app/src', 'lib/coverage/html'])
      await mkdir(path.join(workspace, folder), { recursive: true });
    await writeFile(path.join(workspace, 'app/dist/bundle.js'), 'x'.repeat(2048));
    await writeFile(path.join(workspace, 'lib/coverage/html/index.html'), '<html></html>');
  });

  it('lists what it found in the question and deletes only after approval', async () => {
    const { client, asked } = await answeringClient(scan.url, () => ({ action: 'accept', content: { confirm: true } }));
    const taskId = await startTask(client, 'clean_build_outputs', { path: '.' });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(asked[0]?.message).toBe('Delete 2 build folders, 2.0 KB in all: app/dist (2.0 KB), lib/coverage (13 B)?');
    expect(result.structuredContent).toEqual({
      deleted: [
        { path: 'app/dist', bytes: 2048 },
        { path: 'lib/coverage', bytes: 13 },
      ],
      kept: [],
      bytesFreed: 2061,
    });
    expect(await readdir(path.join(workspace, 'app'))).toEqual(['src']);
    await client.close();
  });

  it('keeps everything when the answer is no', async () => {
    const created = await rpc2026(scan.url, 'tools/call', { name: 'clean_build_outputs', arguments: { path: '.' } });
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(scan.url, 'tasks/get', { taskId }),
      (r) => r.result?.status === 'input_required',
    );
    await rpc2026(scan.url, 'tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { confirm: false } } },
    });
    const done = await pollUntil(
      () => rpc2026(scan.url, 'tasks/get', { taskId }),
      (r) => r.result?.status === 'completed',
    );
    const report = done.result?.result as { structuredContent: { kept: unknown[] } } | undefined;
    expect(report?.structuredContent.kept).toHaveLength(2);
    expect((await readdir(path.join(workspace, 'app'))).sort()).toEqual(['dist', 'src']);
  });
});
