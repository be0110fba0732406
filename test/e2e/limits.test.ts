/**
 * Every bound one caller meets (README "Limits"), each at its boundary: one under is accepted,
 * one over gets the documented error, and the server keeps serving everyone else. Real HTTP,
 * a real bearer verifier, real clients.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import type { TaskServerLimits } from '../../src/host/limits.js';
import { tokenTableVerifier } from '../../src/host/token-table.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { startAppProcess } from './processes.js';
import { connectV1, listenForTasks, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

const verifier = tokenTableVerifier({
  alice: { sub: 'alice', clientId: 'c1' },
  bob: { sub: 'bob', clientId: 'c1' },
  carol: { sub: 'carol', clientId: 'c1' },
  dave: { sub: 'dave', clientId: 'c1' },
});
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const repoRoot = path.resolve(import.meta.dirname, '../..');

function start(limits: Partial<TaskServerLimits>, extra: { workers?: number } = {}): Promise<RunningServer> {
  return startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    http: { auth: { verifier } },
    limits,
    ...extra,
  });
}

/** A 2026-07-28 POST whose body is given as text, so its exact bytes and nesting are the test's. */
async function postRaw(url: string, body: string, headers: Record<string, string> = bearer('alice')) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      ...headers,
    },
    body,
  });
  const text = await response.text();
  const json = text.startsWith('{') ? (JSON.parse(text) as { error?: { code: number; message: string } }) : {};
  return { status: response.status, ...json };
}

/** A `tools/list` body with `filler` (raw JSON) inside its `_meta`. */
function toolsListBody(filler: string): string {
  return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"limits","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"filler":${filler}}}}`;
}

/** A `tools/list` body of exactly `bytes` bytes. */
function bodyOfSize(bytes: number): string {
  const empty = toolsListBody('""');
  return toolsListBody(JSON.stringify('x'.repeat(bytes - Buffer.byteLength(empty))));
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
/** `toolsListBody` nests the filler 3 deep already (body, params, _meta). */
const bodyOfDepth = (depth: number) => toolsListBody(nested(depth - 3));

async function startTaskB(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

describe('size limits', () => {
  let running: RunningServer;
  let alice: Client;

  beforeAll(async () => {
    running = await start({
      maxBodyBytes: 64 * 1024,
      maxArgumentBytes: 16 * 1024,
      maxAnswerBytes: 2048,
      maxResultBytes: 5000,
      maxListPageBytes: 4000,
    });
    alice = await connectV1(running.url, { token: 'alice' });
  });

  afterAll(async () => {
    await alice?.close();
    await running?.close();
  });

  it('takes a body of maxBodyBytes and refuses one byte more with 413, naming the limit', async () => {
    expect((await postRaw(running.url, bodyOfSize(64 * 1024))).status).toBe(200);
    const over = await postRaw(running.url, bodyOfSize(64 * 1024 + 1));
    expect(over.status).toBe(413);
    expect(over.error?.message).toMatch(/65536-byte limit \(maxBodyBytes\)/);
    expect((await rpc2026(running.url, 'tools/list', {}, { headers: bearer('bob') })).status).toBe(200);
  });

  it('takes JSON nested maxJsonDepth deep and refuses one level more with -32700, naming the limit', async () => {
    expect((await postRaw(running.url, bodyOfDepth(64))).status).toBe(200);
    const over = await postRaw(running.url, bodyOfDepth(65));
    expect(over.status).toBe(400);
    expect(over.error).toMatchObject({ code: -32700, message: expect.stringMatching(/deeper than 64.*maxJsonDepth/) });
  });

  it('stores validated arguments without unknown keys, and refuses arguments over maxArgumentBytes', async () => {
    const taskId = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'kept', smuggled: 'x'.repeat(100) });
    const stored = await running.server.engine.get({ principal: 'sub:alice' }, taskId);
    expect(stored.args).toEqual({ seconds: 0, label: 'kept' });
    // {"seconds":0,"label":"…"} is 24 bytes plus the label.
    const under = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'y'.repeat(16 * 1024 - 24) });
    expect(under).toBeTruthy();
    await expect(
      startTaskB(alice, 'slow_compute', { seconds: 0, label: 'y'.repeat(16 * 1024 - 23) }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/16384-byte limit \(maxArgumentBytes\)/) });
  });

  it('refuses an answer over maxAnswerBytes and keeps the question open; takes one under', async () => {
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'f' } },
      { headers: bearer('alice') },
    );
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }, { headers: bearer('alice') }),
      (reply) => reply.result?.status === 'input_required',
    );
    const answer = (pad: number) => ({
      confirm: { action: 'accept', content: { confirm: false, pad: 'p'.repeat(pad) } },
    });
    // {"action":"accept","content":{"confirm":false,"pad":""}} is 56 bytes.
    const over = await rpc2026(
      running.url,
      'tasks/update',
      { taskId, inputResponses: answer(2048 - 55) },
      { headers: bearer('alice') },
    );
    expect(over.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/2048-byte limit \(maxAnswerBytes\)/),
    });
    expect((await rpc2026(running.url, 'tasks/get', { taskId }, { headers: bearer('alice') })).result?.status).toBe(
      'input_required',
    );
    const under = await rpc2026(
      running.url,
      'tasks/update',
      { taskId, inputResponses: answer(2048 - 56) },
      { headers: bearer('alice') },
    );
    expect(under.error).toBeUndefined();
    const done = await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId }, { headers: bearer('alice') }),
      (reply) => reply.result?.status === 'completed',
    );
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'Kept f' }] });
  });

  it('cuts a statusMessage at 4096 characters with an ellipsis', async () => {
    const taskId = await startTaskB(alice, 'slow_compute', { seconds: 30, label: 'm'.repeat(6000) });
    const task = await pollUntil(
      () => alice.experimental.tasks.getTask(taskId),
      (current) => current.statusMessage?.startsWith('computing') ?? false,
    );
    expect(task.statusMessage).toHaveLength(4096);
    expect(task.statusMessage?.endsWith('…')).toBe(true);
    await alice.experimental.tasks.cancelTask(taskId);
  });

  it('fails a task whose result is over maxResultBytes, saying so; keeps one under', async () => {
    const small = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 's'.repeat(3000) });
    expect((await alice.experimental.tasks.getTaskResult(small, CallToolResultSchema)).isError).toBeFalsy();
    const big = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'b'.repeat(6000) });
    await expect(alice.experimental.tasks.getTaskResult(big, CallToolResultSchema)).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/over the 5000-byte limit on a stored task result \(maxResultBytes\)/),
    });
    expect((await alice.experimental.tasks.getTask(big)).status).toBe('failed');
  });

  it('ends a tasks/list page before it passes maxListPageBytes, and the next pages hold the rest', async () => {
    const bob = await connectV1(running.url, { token: 'bob' });
    const mine: string[] = [];
    for (let index = 0; index < 5; index++) {
      mine.push(await startTaskB(bob, 'slow_compute', { seconds: 30, label: `${index}`.repeat(1500) }));
    }
    await pollUntil(
      () => Promise.all(mine.map((taskId) => bob.experimental.tasks.getTask(taskId))),
      (tasks) => tasks.every((task) => task.statusMessage?.startsWith('computing')),
    );
    const seen: string[] = [];
    let cursor: string | undefined;
    let largest = 0;
    do {
      const page = await bob.experimental.tasks.listTasks(cursor);
      largest = Math.max(largest, page.tasks.length);
      seen.push(...page.tasks.map((task) => task.taskId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...mine].sort());
    expect(largest).toBeLessThan(5);
    expect(largest).toBeGreaterThanOrEqual(1);
    await Promise.all(mine.map((taskId) => bob.experimental.tasks.cancelTask(taskId)));
    await bob.close();
  });
});

describe('what a request costs before anyone is admitted', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await start({});
  });

  afterAll(() => running?.close());

  it('refuses JSON nested a million deep in one linear scan, and keeps answering others', async () => {
    const body = bodyOfDepth(1_000_000);
    expect(Buffer.byteLength(body)).toBeLessThan(4 * 1024 * 1024);
    const before = process.cpuUsage();
    const replies = await Promise.all([1, 2, 3, 4, 5].map(() => postRaw(running.url, body)));
    const cpu = process.cpuUsage(before);
    for (const reply of replies) expect(reply.error?.code).toBe(-32700);
    // Client and server share this process: both sides of five 2 MB requests, in well under
    // the ~2 s of CPU one recursive parse of such a body took.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1500);
    expect((await rpc2026(running.url, 'tools/list', {}, { headers: bearer('bob') })).status).toBe(200);
  });

  it('answers anonymous 4 MB bodies with 401 from their headers, without reading them', async () => {
    const body = Buffer.alloc(4 * 1024 * 1024 - 1, 0x20);
    const url = new URL(running.url);
    const post = () =>
      new Promise<number | 'closed'>((resolve) => {
        const request = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': body.length },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        // The server closes the connection instead of draining the body it refused.
        request.on('error', () => resolve('closed'));
        request.end(body);
      });
    const before = process.memoryUsage();
    const outcomes = await Promise.all(Array.from({ length: 50 }, post));
    const after = process.memoryUsage();
    expect(outcomes.filter((outcome) => outcome === 401).length).toBeGreaterThan(0);
    expect(outcomes.every((outcome) => outcome === 401 || outcome === 'closed')).toBe(true);
    // Reading them would have buffered 50 × 4 MB; nothing near that may stay behind.
    expect((after.arrayBuffers - before.arrayBuffers) / 2 ** 20).toBeLessThan(64);
    expect((after.rss - before.rss) / 2 ** 20).toBeLessThan(150);
    expect((await rpc2026(running.url, 'tools/list', {}, { headers: bearer('bob') })).status).toBe(200);
  });
});

describe('quotas per principal', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await start({
      maxLiveTasksPerPrincipal: 2,
      maxSessionsPerPrincipal: 3,
      maxListenStreamsPerPrincipal: 1,
      maxBlockingResultsPerPrincipal: 1,
      maxTaskIdsPerListen: 3,
    });
  });

  afterAll(() => running?.close());

  it('refuses a third unfinished task with -32010 naming the limit, serves Bob, and frees a slot on cancel', async () => {
    const alice = await connectV1(running.url, { token: 'alice' });
    const bob = await connectV1(running.url, { token: 'bob' });
    const first = await startTaskB(alice, 'slow_compute', { seconds: 30, label: '1' });
    await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'done' }).then((taskId) =>
      alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
    );
    const second = await startTaskB(alice, 'slow_compute', { seconds: 30, label: '2' });
    await expect(startTaskB(alice, 'slow_compute', { seconds: 30, label: '3' })).rejects.toMatchObject({
      code: -32010,
      message: expect.stringMatching(/limit is 2 \(maxLiveTasksPerPrincipal\)/),
      data: { limit: 'maxLiveTasksPerPrincipal', value: 2 },
    });
    const modern = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 30, label: '3' } },
      { headers: bearer('alice') },
    );
    expect(modern.error?.code).toBe(-32010);
    const bobs = await startTaskB(bob, 'slow_compute', { seconds: 0, label: 'bob' });
    expect(bobs).toBeTruthy();
    expect((await alice.experimental.tasks.getTask(second)).status).toBe('working');
    await alice.experimental.tasks.cancelTask(first);
    const third = await startTaskB(alice, 'slow_compute', { seconds: 30, label: '3' });
    await Promise.all([second, third].map((taskId) => alice.experimental.tasks.cancelTask(taskId)));
    await Promise.all([alice.close(), bob.close()]);
  });

  it('refuses a session over maxSessionsPerPrincipal, and takes one again after a session ends', async () => {
    const sessions = [
      await connectV1(running.url, { token: 'carol' }),
      await connectV1(running.url, { token: 'carol' }),
      await connectV1(running.url, { token: 'carol' }),
    ];
    const refused = await fetch(running.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...bearer('carol'),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: { code: -32010, message: expect.stringMatching(/limit is 3 \(maxSessionsPerPrincipal\)/) },
    });
    const bob = await connectV1(running.url, { token: 'bob' });
    await (sessions[0]?.transport as StreamableHTTPClientTransport | undefined)?.terminateSession();
    const again = await connectV1(running.url, { token: 'carol' });
    await Promise.all([...sessions, again, bob].map((client) => client.close()));
    for (const client of [...sessions.slice(1), again]) {
      await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => {});
    }
  });

  it('caps listen streams per principal and ids per stream', async () => {
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 30, label: 'l' } },
      { headers: bearer('alice') },
    );
    const taskId = created.result?.taskId as string;
    const tooMany = await listenForTasks(running.url, [taskId, 'a', 'b', 'c'], { headers: bearer('alice') });
    expect(tooMany.status).toBe(400);
    expect(tooMany.error?.code).toBe(-32602);
    const first = await listenForTasks(running.url, [taskId, 'a', 'b'], { headers: bearer('alice') });
    expect(first.status).toBe(200);
    const second = await listenForTasks(running.url, [taskId], { headers: bearer('alice') });
    expect(second.status).toBe(429);
    expect(second.error).toMatchObject({ code: -32010, data: { limit: 'maxListenStreamsPerPrincipal', value: 1 } });
    const bobs = await listenForTasks(running.url, [taskId], { headers: bearer('bob') });
    expect(bobs.status).toBe(200);
    bobs.stream?.close();
    first.stream?.close();
    const later = await pollUntil(
      () => listenForTasks(running.url, [taskId], { headers: bearer('alice') }),
      (attempt) => {
        if (attempt.status !== 200) return false;
        return true;
      },
    );
    later.stream?.close();
    await rpc2026(running.url, 'tasks/cancel', { taskId }, { headers: bearer('alice') });
  });

  it('caps blocking tasks/result calls per principal', async () => {
    const alice = await connectV1(running.url, { token: 'dave' });
    const other = await connectV1(running.url, { token: 'dave' });
    const taskId = await startTaskB(alice, 'slow_compute', { seconds: 30, label: 'wait' });
    const waiting = alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((error) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject({
      code: -32010,
      message: expect.stringMatching(/limit is 1 \(maxBlockingResultsPerPrincipal\)/),
    });
    await alice.experimental.tasks.cancelTask(taskId);
    await waiting;
    const done = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'after' });
    expect((await other.experimental.tasks.getTaskResult(done, CallToolResultSchema)).content).toEqual([
      { type: 'text', text: 'Computed after in 0s' },
    ]);
    await Promise.all([alice.close(), other.close()]);
  });
});

describe('the in-process runtime runs a bounded number of tasks at once', () => {
  it('keeps the rest working with "queued" until a slot frees', async () => {
    const running = await start({}, { workers: 1 });
    try {
      const alice = await connectV1(running.url, { token: 'alice' });
      const first = await startTaskB(alice, 'slow_compute', { seconds: 30, label: 'first' });
      const second = await startTaskB(alice, 'slow_compute', { seconds: 0, label: 'second' });
      const waiting = await alice.experimental.tasks.getTask(second);
      expect(waiting).toMatchObject({ status: 'working', statusMessage: 'queued' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await alice.experimental.tasks.getTask(second)).statusMessage).toBe('queued');
      await alice.experimental.tasks.cancelTask(first);
      expect((await alice.experimental.tasks.getTaskResult(second, CallToolResultSchema)).content).toEqual([
        { type: 'text', text: 'Computed second in 0s' },
      ]);
      await alice.close();
    } finally {
      await running.close();
    }
  });
});

describe('rate limits', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await start({ createsPerSecond: 1, createBurst: 2, readsPerSecond: 1, readBurst: 2 });
  });

  afterAll(() => running?.close());

  const create = (token: string) =>
    rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'r' } },
      { headers: bearer(token) },
    );

  it('answers 429 with Retry-After and the delay in the error once the creation budget is spent', async () => {
    const accepted = [await create('alice'), await create('alice'), await create('alice')];
    for (const reply of accepted) expect(reply.status).toBe(200);
    let refused: Awaited<ReturnType<typeof create>> | undefined;
    for (let attempt = 0; attempt < 5 && !refused; attempt++) {
      const reply = await create('alice');
      if (reply.status === 429) refused = reply;
    }
    expect(refused?.error).toMatchObject({
      code: -32011,
      message: expect.stringMatching(/per second \(createsPerSecond\)/),
      data: { limit: 'createsPerSecond', retryAfterMs: expect.any(Number) },
    });
    const raw = await fetch(running.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'slow_compute',
        ...bearer('alice'),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} }),
    });
    if (raw.status === 429) expect(Number(raw.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Bob has his own budget.
    expect((await create('bob')).status).toBe(200);
  });

  it('counts reads apart from creations', async () => {
    const created = await create('bob');
    const taskId = created.result?.taskId as string;
    let refused: number | undefined;
    for (let attempt = 0; attempt < 8 && refused === undefined; attempt++) {
      const reply = await rpc2026(running.url, 'tasks/get', { taskId }, { headers: bearer('bob') });
      if (reply.status === 429) refused = attempt;
      else expect(reply.result?.taskId).toBe(taskId);
    }
    expect(refused).toBeGreaterThanOrEqual(3);
  });
});

describe('rate limits on listens', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await start({ readsPerSecond: 1, readBurst: 3 });
  });
  afterAll(() => running?.close());

  it('counts one read per task id a listen names', async () => {
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 30, label: 'l' } },
      { headers: bearer('carol') },
    );
    const taskId = created.result?.taskId as string;
    const ids = [taskId, 'unknown-1', 'unknown-2'];
    // Three ids: a fresh budget (one in the second, a burst of three) holds them once, not twice.
    const first = await listenForTasks(running.url, ids, { headers: bearer('carol') });
    expect(first.status).toBe(200);
    first.stream?.close();
    const second = await listenForTasks(running.url, ids, { headers: bearer('carol') });
    expect(second.status).toBe(429);
    expect(second.error).toMatchObject({ code: -32011, data: { limit: 'readsPerSecond' } });
    const daves = await listenForTasks(running.url, [taskId], { headers: bearer('dave') });
    expect(daves.status).toBe(200);
    daves.stream?.close();
    await rpc2026(running.url, 'tasks/cancel', { taskId }, { headers: bearer('carol') });
  });
});

const META_2026 = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'limits', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

/**
 * A POST sent from `localAddress` (any 127.x address reaches loopback), answered once its
 * headers arrive: the body may be a stream, read by nobody and ended by `close`.
 */
function postFrom(
  url: string,
  localAddress: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; close: () => void }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (response) => resolve({ status: response.statusCode ?? 0, close: () => response.destroy() }),
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** A 2026-07-28 `tasks/get` sent from `localAddress`; its status. */
async function tasksGetFrom(url: string, localAddress: string, headers: Record<string, string> = {}): Promise<number> {
  const reply = await postFrom(
    url,
    localAddress,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/get', 'mcp-name': 'no-such-task', ...headers },
    { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 'no-such-task', _meta: META_2026 } },
  );
  reply.close();
  return reply.status;
}

/** A listen (left open) to `taskId` from `localAddress`. */
const listenFrom = (url: string, localAddress: string, taskId: string) =>
  postFrom(
    url,
    localAddress,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { _meta: META_2026, notifications: { taskIds: [taskId] } },
    },
  );

/** A 2025-11-25 `initialize` (its session left open) from `localAddress`. */
const initializeFrom = (url: string, localAddress: string) =>
  postFrom(
    url,
    localAddress,
    {},
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } },
    },
  );

describe('rate limits of callers nothing identifies', () => {
  let direct: RunningServer;
  let proxied: RunningServer;
  const options = {
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    limits: { readsPerSecond: 1, readBurst: 2 },
  };

  beforeAll(async () => {
    [direct, proxied] = await Promise.all([
      startServer(options),
      startServer({ ...options, http: { trustProxy: 'loopback' } }),
    ]);
  });
  afterAll(() => Promise.all([direct?.close(), proxied?.close()]));

  /** Reads until refused; the budget of one second and the burst hold three. */
  async function spendAll(send: () => Promise<number>): Promise<void> {
    let status = 0;
    for (let attempt = 0; attempt < 6 && status !== 429; attempt++) status = await send();
    expect(status).toBe(429);
  }
  /** Two reads at once: a fresh budget holds both; a spent one refuses at least one. */
  const twoAtOnce = (send: () => Promise<number>) => Promise.all([send(), send()]);

  it('are counted by address: one noisy client does not spend the budget of another', async () => {
    await spendAll(() => tasksGetFrom(direct.url, '127.0.0.1'));
    for (const status of await twoAtOnce(() => tasksGetFrom(direct.url, '127.0.0.2'))) expect(status).not.toBe(429);
    // A client cannot buy a fresh budget by sending X-Forwarded-For: no proxy is trusted here.
    const spoofed = await twoAtOnce(() => tasksGetFrom(direct.url, '127.0.0.1', { 'x-forwarded-for': '198.51.100.7' }));
    expect(spoofed).toContain(429);
  });

  it('behind a trusted proxy, are counted by the client address the proxy forwards', async () => {
    const from = (client: string) => () => tasksGetFrom(proxied.url, '127.0.0.1', { 'x-forwarded-for': client });
    await spendAll(from('203.0.113.5'));
    for (const status of await twoAtOnce(from('203.0.113.6'))) expect(status).not.toBe(429);
    expect(await twoAtOnce(from('203.0.113.5'))).toContain(429);
  });

  it('hold quota slots by address: one client cannot take every anonymous session or listen', async () => {
    const quotas = await startServer({
      ...options,
      limits: { maxListenStreamsPerPrincipal: 1, maxSessionsPerPrincipal: 1 },
    });
    const open: { close: () => void }[] = [];
    const keep = async (reply: Promise<{ status: number; close: () => void }>) => {
      const settled = await reply;
      open.push(settled);
      return settled.status;
    };
    // A running task: a listen to it stays open (one to no task at all would end at once).
    const created = await rpc2026(quotas.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30, label: 'q' },
    });
    const taskId = created.result?.taskId as string;
    try {
      expect(await keep(listenFrom(quotas.url, '127.0.0.1', taskId))).toBe(200);
      expect(await keep(listenFrom(quotas.url, '127.0.0.1', taskId))).toBe(429);
      expect(await keep(listenFrom(quotas.url, '127.0.0.2', taskId))).toBe(200);
      expect(await keep(initializeFrom(quotas.url, '127.0.0.1'))).toBe(200);
      expect(await keep(initializeFrom(quotas.url, '127.0.0.1'))).toBe(429);
      expect(await keep(initializeFrom(quotas.url, '127.0.0.2'))).toBe(200);
    } finally {
      for (const reply of open) reply.close();
      await rpc2026(quotas.url, 'tasks/cancel', { taskId });
      await quotas.close();
    }
  });
});

describe('connections', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await start({ maxConnections: 2, headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
  });

  afterAll(() => running?.close());

  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const url = new URL(running.url);
      const socket = net.connect(Number(url.port), url.hostname, () => resolve(socket));
      socket.on('error', reject);
    });
  const closed = (socket: net.Socket) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed) resolve();
      socket.on('close', () => resolve());
      socket.resume();
      socket.on('error', () => {});
    });

  it('drops connections over maxConnections, and serves again once they close', async () => {
    const held = [await connect(), await connect()];
    const third = await connect();
    await closed(third);
    for (const socket of held) socket.destroy();
    await pollUntil(
      () => rpc2026(running.url, 'tools/list', {}, { headers: bearer('bob') }).catch(() => ({ status: 0 })),
      (reply) => reply.status === 200,
    );
  });

  it('closes a connection that never finishes its headers', async () => {
    const socket = await connect();
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const started = Date.now();
    await closed(socket);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describeWithRedis('rate limits on Redis', () => {
  const prefix = randomPrefix();
  afterAll(() => deleteKeysUnder(prefix));

  it('are shared by every server process of the app', async () => {
    const options = {
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      http: { auth: { verifier } },
      redis: { connection: REDIS_URL, prefix },
      limits: { createsPerSecond: 1, createBurst: 1 },
    };
    const [one, two] = await Promise.all([startServer(options), startServer(options)]);
    try {
      const create = (url: string) =>
        rpc2026(
          url,
          'tools/call',
          { name: 'slow_compute', arguments: { seconds: 0, label: 's' } },
          { headers: bearer('alice') },
        );
      expect((await create(one.url)).status).toBe(200);
      expect((await create(one.url)).status).toBe(200);
      const third = await create(two.url);
      expect(third.status).toBe(429);
      expect(third.error).toMatchObject({ code: -32011, data: { limit: 'createsPerSecond' } });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('limits from the environment, and the fixture conventions', () => {
  it('over stdio, refuses a create over the rate limit with -32011 and the delay in data', async () => {
    const client = new Client({ name: 'limits-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          '--conditions=mcp-task-server-source',
          '--import',
          'tsx',
          'examples/conformance-fixture/server.ts',
          '--stdio',
        ],
        cwd: repoRoot,
        env: {
          ...(process.env as Record<string, string>),
          MCP_TASK_LOG_LEVEL: 'warn',
          MCP_TASK_CREATES_PER_SECOND: '1',
          MCP_TASK_CREATE_BURST: '1',
        },
        stderr: 'inherit',
      }),
    );
    try {
      const create = () => startTaskB(client, 'slow_compute', { seconds: 0, label: 'stdio' });
      await create();
      await create();
      await expect(create()).rejects.toMatchObject({
        code: -32011,
        data: { limit: 'createsPerSecond', value: 1, retryAfterMs: expect.any(Number) },
      });
    } finally {
      await client.close();
    }
  }, 30_000);

  it('npm run fixture with FIXTURE_TOKENS requires a token from the table that names a subject', async () => {
    const app = await startAppProcess('conformance-fixture', 'server', {
      FIXTURE_TOKENS: JSON.stringify({ 'tok-alice': { sub: 'alice', clientId: 'c1' }, 'tok-app': { clientId: 'c1' } }),
    });
    try {
      const url = app.url as string;
      expect((await rpc2026(url, 'tools/list')).status).toBe(401);
      expect((await rpc2026(url, 'tools/list', {}, { headers: bearer('tok-unknown') })).status).toBe(401);
      expect((await rpc2026(url, 'tools/list', {}, { headers: bearer('tok-app') })).status).toBe(401);
      expect((await rpc2026(url, 'tools/list', {}, { headers: bearer('tok-alice') })).status).toBe(200);
    } finally {
      await app.stop();
    }
  }, 30_000);
});

describe('refusals in the metrics', () => {
  it('counts rate-limit and quota refusals in mcp_task_refusals_total', async () => {
    const running = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      http: { auth: { verifier } },
      metrics: true,
      limits: { createsPerSecond: 1, createBurst: 1, maxLiveTasksPerPrincipal: 1 },
    });
    try {
      const create = (token: string) =>
        rpc2026(
          running.url,
          'tools/call',
          { name: 'slow_compute', arguments: { seconds: 30, label: 'm' } },
          { headers: bearer(token) },
        );
      expect((await create('alice')).status).toBe(200);
      // Over the live-task quota (-32010), then over the rate (429).
      expect((await create('alice')).error?.code).toBe(-32010);
      expect((await create('alice')).status).toBe(429);
      const metrics = await (await fetch(new URL('/metrics', running.url))).text();
      expect(metrics).toMatch(/mcp_task_refusals_total\{reason="quota"\} 1/);
      expect(metrics).toMatch(/mcp_task_refusals_total\{reason="rate_limit"\} 1/);
    } finally {
      await running.close();
    }
  });
});
