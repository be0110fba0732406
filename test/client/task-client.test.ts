/**
 * The client core (`mcp-task-server/client`) against real servers: our conformance fixture in
 * both dialects (over Streamable HTTP and stdio), and a server built with the bare v1 SDK tasks
 * API. One task handle for both dialects: events, questions, cancel, resume by id, expiry.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { app as fixtureApp } from '../../examples/conformance-fixture/app.js';
import {
  connectTaskClient,
  isTaskNotFound,
  JsonRpcResponseError,
  type TaskCall,
  type TaskClient,
  TaskClientError,
  type TaskEvent,
} from '../../src/client/index.js';
import { pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { type BareServer, startBareV1Server } from './bare-v1-task-server.js';

// Some tests start a server process or a compiler; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 60_000 });

const repoRoot = path.resolve(import.meta.dirname, '../..');
let fixture: RunningServer;
let shortLived: RunningServer;
let bare: BareServer;

beforeAll(async () => {
  [fixture, shortLived, bare] = await Promise.all([
    startServer({ manifest: fixtureApp.manifest, instances: fixtureApp.instances }),
    startServer({
      manifest: fixtureApp.manifest,
      instances: fixtureApp.instances,
      policy: { maxTtlMs: 400, minTtlMs: 100 },
    }),
    startBareV1Server(),
  ]);
});

afterAll(async () => {
  await Promise.all([fixture?.close(), shortLived?.close(), bare?.close()]);
});

const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

async function collect(
  call: TaskCall,
  onQuestion?: (event: Extract<TaskEvent, { type: 'question' }>) => Promise<void>,
) {
  const events: TaskEvent[] = [];
  for await (const event of call.events) {
    events.push(event);
    if (event.type === 'question' && onQuestion) await onQuestion(event);
  }
  return events;
}

const statuses = (events: TaskEvent[]) =>
  events.flatMap((e) => (e.type === 'status' ? [e.task.status] : [])).filter((s, i, all) => s !== all[i - 1]);

describe.each([
  ['2025', '2025-11-25'],
  ['2026', '2026-07-28'],
] as const)('against our fixture, dialect %s', (choice, dialect) => {
  let client: TaskClient;
  beforeAll(async () => {
    client = await connectTaskClient(fixture.url, { dialect: choice });
  });
  afterAll(() => client?.close());

  it('speaks the dialect it was asked for', () => {
    expect(client.dialect).toBe(dialect);
  });

  it('runs a task to its result, reporting status on the way', async () => {
    const call = await client.call('slow_compute', { seconds: 0.3, label: 'x' });
    expect(call.taskId).toMatch(/\S{16,}/);
    const events = await collect(call);
    expect(statuses(events)).toEqual(['working', 'completed']);
    expect(events.some((e) => e.type === 'status' && e.task.statusMessage === 'computing x')).toBe(true);
    expect(text(await call.result())).toBe('Computed x in 0.3s');
  });

  it("introduces itself with this package's version", async () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const introduced: string[] = [];
    const seeing = await connectTaskClient(fixture.url, {
      dialect: choice,
      fetch: async (input, init) => {
        const body = typeof init?.body === 'string' ? init.body : '';
        for (const match of body.matchAll(/clientInfo":\{"name":"mcp-task-server-client","version":"([^"]*)"/g)) {
          introduced.push(match[1] as string);
        }
        return fetch(input, init);
      },
    });
    try {
      await (await seeing.call('slow_compute', { seconds: 0, label: 'hello' })).result();
    } finally {
      await seeing.close();
    }
    expect(introduced.length).toBeGreaterThan(0);
    expect(new Set(introduced)).toEqual(new Set([version]));
  });

  it("polls at the server's pollIntervalMs", async () => {
    let gets = 0;
    const counting = await connectTaskClient(fixture.url, {
      dialect: choice,
      defaultPollIntervalMs: 10,
      fetch: async (input, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"method":"tasks/get"')) gets++;
        return fetch(input, init);
      },
    });
    try {
      const call = await counting.call('slow_compute', { seconds: 1, label: 'paced' });
      expect((await call.status()).pollIntervalMs).toBe(200);
      gets = 0;
      await call.result();
      // One second at 200 ms is about five reads; at the 10 ms default it would be a hundred.
      expect(gets).toBeGreaterThanOrEqual(2);
      expect(gets).toBeLessThanOrEqual(12);
    } finally {
      await counting.close();
    }
  });

  it('shows a question by key and resumes on the answer', async () => {
    const call = await client.call('confirm_delete', { filename: 'a.txt' });
    const asked: string[] = [];
    const events = await collect(call, async ({ question }) => {
      asked.push(`${question.key}: ${question.message}`);
      expect(question.requestedSchema).toMatchObject({ properties: { confirm: { type: 'boolean' } } });
      await call.answer(question.key, { confirm: true });
    });
    expect(asked).toEqual(['confirm: Delete a.txt?']);
    expect(statuses(events).at(-1)).toBe('completed');
    expect(text(await call.result())).toBe('Deleted a.txt');
  });

  it('hands a decline to the method', async () => {
    const call = await client.call('confirm_delete', { filename: 'b.txt' });
    await collect(call, ({ question }) => call.decline(question.key));
    expect(text(await call.result())).toBe('Kept b.txt');
  });

  it('cancels a running task; result() then rejects as cancelled', async () => {
    const call = await client.call('slow_compute', { seconds: 30, label: 'long' });
    expect((await call.cancel()).status).toBe('cancelled');
    await expect(call.result()).rejects.toMatchObject({ code: 'task_cancelled' });
    expect((await call.status()).status).toBe('cancelled');
  });

  it('reports a tool error as a result with isError, and a JSON-RPC error as a rejection', async () => {
    const failing = await client.call('failing_job');
    expect(await failing.result()).toMatchObject({ isError: true, content: [{ text: 'The job failed on purpose' }] });
    const broken = await client.call('protocol_error_job');
    const error = await broken.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonRpcResponseError);
    expect(error).toMatchObject({ code: -32603, message: 'The job hit a protocol error on purpose' });
  });

  it('resumes a task by id from a new connection, question included', async () => {
    const first = await connectTaskClient(fixture.url, { dialect: choice });
    const call = await first.call('confirm_delete', { filename: 'c.txt' });
    const taskId = call.taskId as string;
    await pollUntil(
      () => call.status(),
      (task) => task.status === 'input_required',
    );
    await first.close();
    const second = await connectTaskClient(fixture.url, { dialect: choice });
    try {
      const resumed = second.task(taskId);
      await resumed.answer('confirm', { confirm: false });
      expect(text(await resumed.result())).toBe('Kept c.txt');
    } finally {
      await second.close();
    }
  });

  it('gives a plain call a settled handle without a task id', async () => {
    const greeting = await client.call('greet', { name: 'Ada' });
    expect(greeting.taskId).toBeUndefined();
    expect(text(await greeting.result())).toBe('Hello, Ada!');
    const inline = await client.call('slow_compute', { seconds: 0, label: 'now' }, { task: false });
    expect(inline.taskId).toBeUndefined();
    expect((await inline.status()).status).toBe('completed');
    expect(text(await inline.result())).toBe('Computed now in 0s');
  });

  it('says "not found" for an unknown task, and for one past its TTL', async () => {
    await expect(client.task('no-such-task').status()).rejects.toSatisfy(isTaskNotFound);
    const short = await connectTaskClient(shortLived.url, { dialect: choice });
    try {
      const call = await short.call('slow_compute', { seconds: 30, label: 'expiring' });
      expect((await call.status()).ttlMs).toBe(400);
      const gone = await pollUntil(
        () =>
          call.status().then(
            () => undefined,
            (e: unknown) => e,
          ),
        (e) => e !== undefined,
      );
      expect(isTaskNotFound(gone)).toBe(true);
      await expect(call.result()).rejects.toBeInstanceOf(TaskClientError);
    } finally {
      await short.close();
    }
  });
});

describe('2026-07-28 listen streams', () => {
  it('opens one while a task is followed, wakes on its pushes, and closes it when the task ends', async () => {
    const client = await connectTaskClient(fixture.url, { dialect: '2026' });
    try {
      const streams = async () => fixture.server.stats().waiters.total.stream;
      const call = await client.call('confirm_delete', { filename: 'streamed.txt' });
      const events = call.events[Symbol.asyncIterator]();
      await pollUntil(streams, (count) => count === 1);
      // The question arrives on the stream (or the next poll) and the answer ends the task.
      for (let next = await events.next(); !next.done; next = await events.next())
        if (next.value.type === 'question') await call.answer(next.value.question.key, { confirm: true });
      expect(text(await call.result())).toBe('Deleted streamed.txt');
      // The client stays connected; only the task's stream is gone.
      await pollUntil(streams, (count) => count === 0);
    } finally {
      await client.close();
    }
  });
});

describe('negotiation', () => {
  it('picks 2026-07-28 with the tasks extension on our server by default', async () => {
    const client = await connectTaskClient(fixture.url);
    expect(client.dialect).toBe('2026-07-28');
    await expect(client.listTasks()).rejects.toMatchObject({ code: 'tasks_unsupported' });
    await client.close();
  });

  it('falls back to 2025-11-25 on a server that only speaks it (bare v1 SDK)', async () => {
    const client = await connectTaskClient(bare.url);
    expect(client.dialect).toBe('2025-11-25');
    await client.close();
  });
});

describe('against a bare v1 SDK task server (2025-11-25, no code of ours)', () => {
  let client: TaskClient;
  beforeAll(async () => {
    client = await connectTaskClient(bare.url);
  });
  afterAll(() => client?.close());

  it('lists its tools with their task support', async () => {
    expect((await client.listTools()).map((t) => [t.name, t.taskSupport])).toEqual([
      ['delay', 'required'],
      ['confirm', 'required'],
    ]);
  });

  it('runs a task, answers its question, cancels another and lists them', async () => {
    const delay = await client.call('delay', { duration: 100 });
    expect(text(await delay.result())).toBe('Waited 100ms');
    const confirm = await client.call('confirm', { what: 'the thing' });
    await collect(confirm, ({ question }) => {
      expect(question.message).toBe('Go ahead with the thing?');
      return confirm.answer(question.key, { go: true });
    });
    expect(text(await confirm.result())).toBe('Did the thing');
    const long = await client.call('delay', { duration: 30_000 });
    expect((await long.cancel()).status).toBe('cancelled');
    await expect(long.result()).rejects.toMatchObject({ code: 'task_cancelled' });
    const { tasks } = await client.listTasks();
    expect(tasks.map((t) => t.taskId)).toEqual(expect.arrayContaining([delay.taskId, confirm.taskId, long.taskId]));
  });
});

describe('over stdio', () => {
  it.each(['2025', '2026'] as const)('drives a task with a question in dialect %s', async (choice) => {
    const client = await connectTaskClient(
      {
        command: process.execPath,
        args: [
          '--conditions=mcp-task-server-source',
          '--import',
          'tsx',
          'examples/conformance-fixture/server.ts',
          '--stdio',
        ],
        cwd: repoRoot,
        env: { ...(process.env as Record<string, string>), MCP_TASK_LOG_LEVEL: 'silent' },
      },
      { dialect: choice },
    );
    try {
      expect(client.dialect).toBe(choice === '2025' ? '2025-11-25' : '2026-07-28');
      const call = await client.call('confirm_delete', { filename: 'd.txt' });
      await collect(call, ({ question }) => call.answer(question.key, { confirm: true }));
      expect(text(await call.result())).toBe('Deleted d.txt');
    } finally {
      await client.close();
    }
  });
});
