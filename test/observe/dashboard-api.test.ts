/**
 * The dashboard's JSON API: behind the same auth as `/mcp`, reading through the engine with the
 * same owner rules. Two principals: one never sees, cancels or answers the other's tasks. An
 * admin principal may look at another's tasks when it names them. Bad input gets a clear 4xx.
 * The timeline shows the policies (timeouts, retry waits, priority, repeated idempotent creates,
 * waits for a principal's share) on both runtimes, each only on its owner's tasks.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { OpsTools, opsManifest, PolicyTools, policyManifest, tokenAuth } from './ops-app.js';

const TOKENS = { 'token-ann': 'ann', 'token-bob': 'bob', 'token-root': 'root' };
let running: RunningServer;
let ann: Client;
let bob: Client;
let base: string;
let annCrawl: string;
let annPublish: string;
let bobCrawl: string;

async function startTask(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function call(path: string, token: string | undefined, init: RequestInit = {}) {
  const response = await fetch(`${base}/dashboard/api${path}`, {
    ...init,
    headers: {
      ...(token && { authorization: `Bearer ${token}` }),
      ...(init.body !== undefined && { 'content-type': 'application/json' }),
      ...(init.headers as Record<string, string>),
    },
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read loosely and pinned by the assertions.
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

beforeAll(async () => {
  running = await startServer({
    manifest: opsManifest,
    instances: [new OpsTools()],
    http: { auth: tokenAuth(TOKENS) },
    dashboard: { admins: ['sub:root'] },
  });
  base = new URL(running.url).origin;
  ann = await connectV1(running.url, { token: 'token-ann' });
  bob = await connectV1(running.url, { token: 'token-bob' });
  annCrawl = await startTask(ann, 'crawl', { pages: 1000, pauseMs: 200 });
  annPublish = await startTask(ann, 'publish');
  bobCrawl = await startTask(bob, 'crawl', { pages: 1000, pauseMs: 200 });
  await pollUntil(
    () => ann.experimental.tasks.getTask(annPublish),
    (task) => task.status === 'input_required',
  );
});

afterAll(async () => {
  await Promise.allSettled([ann?.close(), bob?.close()]);
  await running?.close();
});

describe('dashboard API', () => {
  it('serves the page shell, without data, at /dashboard', async () => {
    const response = await fetch(`${base}/dashboard`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain('<title>Tasks');
    expect(html).not.toContain(annCrawl);
  });

  it('refuses a caller without a valid token, as /mcp does', async () => {
    expect((await call('/tasks', undefined)).status).toBe(401);
    expect((await call('/tasks', 'forged')).status).toBe(401);
    expect((await call(`/tasks/${annCrawl}`, undefined)).status).toBe(401);
  });

  it('refuses a foreign Origin (DNS rebinding), as /mcp does', async () => {
    const { status } = await call('/tasks', 'token-ann', { headers: { origin: 'http://evil.example' } });
    expect(status).toBe(403);
  });

  it("lists only the caller's tasks, newest first, with the filters it offers", async () => {
    const annList = await call('/tasks', 'token-ann');
    expect(annList.status).toBe(200);
    expect(annList.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([annPublish, annCrawl]);
    expect(annList.body.tools).toEqual(['crawl', 'publish', 'explode', 'lie']);
    expect(annList.body.viewer).toEqual({ principal: 'sub:ann', admin: false, actingAs: 'sub:ann' });
    const bobList = await call('/tasks', 'token-bob');
    expect(bobList.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([bobCrawl]);

    const waiting = await call('/tasks?status=input_required', 'token-ann');
    expect(waiting.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([annPublish]);
    expect(waiting.body.tasks[0].questions).toEqual([
      {
        key: 'approval',
        message: 'Publish the report?',
        schema: expect.objectContaining({ required: ['approve'] }),
      },
    ]);
    const crawls = await call('/tasks?tool=crawl', 'token-ann');
    expect(crawls.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([annCrawl]);
  });

  it('names bad filters', async () => {
    expect(await call('/tasks?status=sleeping', 'token-ann')).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('status is one of working') },
    });
    expect(await call('/tasks?tool=nope', 'token-ann')).toMatchObject({
      status: 400,
      body: { error: "no task tool is named 'nope'" },
    });
  });

  it("never shows, cancels or answers another principal's task: it is not found", async () => {
    expect((await call(`/tasks/${annCrawl}`, 'token-bob')).status).toBe(404);
    expect((await call(`/tasks/${annCrawl}/cancel`, 'token-bob', { method: 'POST' })).status).toBe(404);
    const answer = await call(`/tasks/${annPublish}/answer`, 'token-bob', {
      method: 'POST',
      body: JSON.stringify({ key: 'approval', content: { approve: true } }),
    });
    expect(answer.status).toBe(404);
    expect((await ann.experimental.tasks.getTask(annCrawl)).status).toBe('working');
    expect((await ann.experimental.tasks.getTask(annPublish)).status).toBe('input_required');
  });

  it('lets an admin look at a named principal, and nobody else', async () => {
    const asAnn = await call('/tasks?as=sub:ann', 'token-root');
    expect(asAnn.status).toBe(200);
    expect(asAnn.body.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([annPublish, annCrawl]);
    expect(asAnn.body.viewer).toEqual({ principal: 'sub:root', admin: true, actingAs: 'sub:ann' });
    expect((await call(`/tasks/${annCrawl}?as=sub:ann`, 'token-root')).status).toBe(200);
    expect((await call('/tasks?as=sub:ann', 'token-bob')).status).toBe(403);
    expect((await call(`/tasks/${annCrawl}?as=sub:ann`, 'token-bob')).status).toBe(403);
  });

  it('refuses an answer that does not fit the question, naming the field, and keeps the question open', async () => {
    const wrong = await call(`/tasks/${annPublish}/answer`, 'token-ann', {
      method: 'POST',
      body: JSON.stringify({ key: 'approval', content: { approve: 'yes' } }),
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toContain('approve');
    const notJson = await call(`/tasks/${annPublish}/answer`, 'token-ann', { method: 'POST', body: 'approve' });
    expect(notJson).toMatchObject({ status: 400, body: { error: 'the body must be a JSON object' } });
    const tooLarge = await call(`/tasks/${annPublish}/answer`, 'token-ann', {
      method: 'POST',
      body: JSON.stringify({ key: 'approval', content: { note: 'x'.repeat(70_000) } }),
    });
    expect(tooLarge.status).toBe(413);
    const noKey = await call(`/tasks/${annPublish}/answer`, 'token-ann', {
      method: 'POST',
      body: JSON.stringify({ content: {} }),
    });
    expect(noKey.status).toBe(400);
    expect((await ann.experimental.tasks.getTask(annPublish)).status).toBe('input_required');
  });

  it("answers the owner's question and shows the task's timeline and result", async () => {
    const answered = await call(`/tasks/${annPublish}/answer`, 'token-ann', {
      method: 'POST',
      body: JSON.stringify({ key: 'approval', content: { approve: true, note: 'ok' } }),
    });
    expect(answered.status).toBe(200);
    const done = await pollUntil(
      () => call(`/tasks/${annPublish}`, 'token-ann'),
      (reply) => reply.body.task.status === 'completed',
    );
    expect(done.body.task.result).toEqual({ text: 'published: ok', isError: false });
    // In order (status messages in between, such as the reason an earlier answer was refused).
    const kinds: string[] = done.body.task.timeline.map((entry: { kind: string }) => entry.kind);
    const story = ['created', 'question', 'answer', 'result'].map((kind) => kinds.indexOf(kind));
    expect(story).toEqual([...story].sort((a, b) => a - b));
    expect(story[0]).toBe(0);
    expect(story.at(-1)).toBe(kinds.length - 1);
    expect(done.body.task.timeline.find((entry: { kind: string }) => entry.kind === 'question').text).toBe(
      'approval: Publish the report?',
    );
    expect(done.body.task.ttlLeftMs).toBeGreaterThan(0);
  });

  it("cancels the owner's running task, once", async () => {
    const cancelled = await call(`/tasks/${annCrawl}/cancel`, 'token-ann', { method: 'POST' });
    expect(cancelled).toMatchObject({ status: 200, body: { task: { status: 'cancelled' } } });
    expect((await call(`/tasks/${annCrawl}/cancel`, 'token-ann', { method: 'POST' })).status).toBe(409);
    expect((await bob.experimental.tasks.getTask(bobCrawl)).status).toBe('working');
  });

  it('is off unless enabled', async () => {
    const plain = await startServer({ manifest: opsManifest, instances: [new OpsTools()] });
    try {
      expect((await fetch(`${new URL(plain.url).origin}/dashboard`)).status).toBe(404);
      expect((await fetch(`${new URL(plain.url).origin}/dashboard/api/tasks`)).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('dashboard API rate limits', () => {
  // One read per second and a burst of two per ten seconds: the fourth quick call is over.
  const LIMITED = { 'token-cy': 'cy', 'token-dee': 'dee', 'token-eve': 'eve' };
  let limited: RunningServer;
  let origin: string;

  beforeAll(async () => {
    limited = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      http: { auth: tokenAuth(LIMITED) },
      dashboard: true,
      limits: { readsPerSecond: 1, readBurst: 2 },
      listPageSize: 2,
    });
    origin = new URL(limited.url).origin;
  });
  afterAll(() => limited?.close());

  const ask = async (path: string, token: string, init: RequestInit = {}) => {
    const response = await fetch(`${origin}/dashboard/api${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
      },
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };
  /** Four calls at once: a fresh budget holds three (one in the second, two of burst), so one is refused. */
  const fourAtOnce = (path: string, token: string, init?: RequestInit) =>
    Promise.all([1, 2, 3, 4].map(() => ask(path, token, init)));

  it('answers 429 with Retry-After once the read budget is spent, and another principal still gets through', async () => {
    let refused: Awaited<ReturnType<typeof ask>> | undefined;
    for (let attempt = 0; attempt < 6 && !refused; attempt++) {
      const reply = await ask('/tasks', 'token-cy');
      if (reply.status === 429) refused = reply;
      else expect(reply.status).toBe(200);
    }
    expect(refused?.body).toMatchObject({
      error: expect.stringMatching(/per second \(readsPerSecond\)/),
      limit: 'readsPerSecond',
      retryAfterMs: expect.any(Number),
    });
    expect(Number(refused?.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await ask('/tasks', 'token-dee')).status).toBe(200);
  });

  it('counts cancels and answers against the read budget too', async () => {
    const cancels = await fourAtOnce('/tasks/no-such-task/cancel', 'token-dee', { method: 'POST' });
    expect(cancels.map((reply) => reply.status)).toContain(429);
    for (const reply of cancels) expect([404, 429]).toContain(reply.status);
    const answers = await fourAtOnce('/tasks/no-such-task/answer', 'token-eve', {
      method: 'POST',
      body: JSON.stringify({ key: 'approval', content: { approve: true } }),
    });
    expect(answers.map((reply) => reply.status)).toContain(429);
  });

  it('spends one read per page of a listing, and cuts the listing short when the budget runs out', async () => {
    const tokens = { 'token-fay': 'fay' };
    const paged = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      http: { auth: tokenAuth(tokens) },
      dashboard: true,
      limits: { readsPerSecond: 1, readBurst: 2 },
      listPageSize: 2,
    });
    const fay = await connectV1(paged.url, { token: 'token-fay' });
    try {
      // Nine tasks are five pages of two: five reads, where the budget holds three.
      for (let task = 0; task < 9; task++) await startTask(fay, 'crawl', { pages: 1000, pauseMs: 200 });
      const response = await fetch(`${new URL(paged.url).origin}/dashboard/api/tasks`, {
        headers: { authorization: 'Bearer token-fay' },
      });
      const listing = (await response.json()) as { truncated: boolean; tasks: unknown[] };
      expect(response.status).toBe(200);
      expect(listing.truncated).toBe(true);
      expect(listing.tasks.length).toBeGreaterThan(0);
      expect(listing.tasks.length).toBeLessThan(9);
    } finally {
      await fay.close();
      await paged.close();
    }
  });
});

/** What the timeline shows of each policy, on one runtime. */
function describePolicyTimeline(name: string, onRedis: boolean): void {
  (onRedis ? describeWithRedis : describe)(`the dashboard timeline of the policies on ${name}`, () => {
    const prefix = randomPrefix();
    let policies: RunningServer;
    let cy: Client;
    let dee: Client;
    let origin: string;

    beforeAll(async () => {
      policies = await startServer({
        manifest: policyManifest,
        instances: [new PolicyTools()],
        http: { auth: tokenAuth({ 'token-cy': 'cy', 'token-dee': 'dee' }) },
        dashboard: true,
        limits: { maxRunningTasksPerPrincipal: 1 },
        ...(onRedis && { redis: { connection: REDIS_URL, prefix } }),
      });
      origin = new URL(policies.url).origin;
      cy = await connectV1(policies.url, { token: 'token-cy' });
      dee = await connectV1(policies.url, { token: 'token-dee' });
    });
    afterAll(async () => {
      await Promise.allSettled([cy?.close(), dee?.close()]);
      await policies?.close();
      if (onRedis) await deleteKeysUnder(prefix);
    });

    const detailOf = async (taskId: string, token: string) => {
      const response = await fetch(`${origin}/dashboard/api/tasks/${taskId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      // biome-ignore lint/suspicious/noExplicitAny: response bodies are read loosely and pinned by the assertions.
      return { status: response.status, task: ((await response.json()) as Record<string, any>).task };
    };
    const entries = (task: { timeline: { kind: string; text: string }[] }, kind: string) =>
      task.timeline.filter((entry) => entry.kind === kind).map((entry) => entry.text);

    it('shows a timed-out attempt, each retry wait (attempt n of m, delay, reason) and the result', async () => {
      const taskId = await startTask(cy, 'flaky', { label: 'a' });
      const { task } = await pollUntil(
        () => detailOf(taskId, 'token-cy'),
        (reply) => reply.task.status === 'completed',
        15_000,
      );
      expect(entries(task, 'timeout')).toEqual(['attempt 1 of 3 timed out after 300 ms']);
      expect(entries(task, 'retry')).toEqual([
        'attempt 2 of 3 in 50 ms: timed out after 300 ms',
        'attempt 3 of 3 in 50 ms: ECONNRESET',
      ]);
      expect(entries(task, 'result')).toEqual(['ok on attempt 3']);
      const kinds: string[] = task.timeline.map((entry: { kind: string }) => entry.kind);
      expect(kinds.indexOf('timeout')).toBeLessThan(kinds.indexOf('retry'));
    });

    it("shows a task's priority, and each repeated idempotent create that returned it", async () => {
      const taskId = await startTask(cy, 'lookup', { term: 'otter' });
      expect(await startTask(cy, 'lookup', { term: 'otter' })).toBe(taskId);
      expect(await startTask(cy, 'lookup', { term: 'otter' })).toBe(taskId);
      const { task } = await pollUntil(
        () => detailOf(taskId, 'token-cy'),
        (reply) => reply.task.status === 'completed',
      );
      expect(task.priority).toBe(7);
      expect(entries(task, 'created')[0]).toMatch(/^created \(priority 7, kept until /);
      expect(entries(task, 'idempotent_hit')).toHaveLength(2);
      expect(entries(task, 'idempotent_hit')[0]).toMatch(
        /^a repeated create with the same idempotency key returned this task \((working|completed)\)$/,
      );
    });

    it("shows a task waiting for its principal's share, why, and its start once a slot frees", async () => {
      const first = await startTask(cy, 'hold', { ms: 600 });
      const second = await startTask(cy, 'hold', { ms: 0 });
      const { task } = await pollUntil(
        () => detailOf(second, 'token-cy'),
        (reply) => reply.task.status === 'completed',
        15_000,
      );
      expect(entries(task, 'waiting')).toEqual(['waits (principal_share): 1 running, limit 1']);
      expect(entries(task, 'message')).toContain('queued (1 running for this caller)');
      expect(entries((await detailOf(first, 'token-cy')).task, 'waiting')).toEqual([]);
    });

    it("never shows one principal's entries on another's timeline, nor another's timeline at all", async () => {
      // The same arguments from two principals are two requests: each gets its own task.
      const cyTask = await startTask(cy, 'lookup', { term: 'badger' });
      const deeTask = await startTask(dee, 'lookup', { term: 'badger' });
      expect(deeTask).not.toBe(cyTask);
      expect(await startTask(cy, 'lookup', { term: 'badger' })).toBe(cyTask);
      const cyHold = await startTask(cy, 'hold', { ms: 400 });
      const cyQueued = await startTask(cy, 'hold', { ms: 0 });
      const deeHold = await startTask(dee, 'hold', { ms: 0 });
      await pollUntil(
        () => detailOf(cyQueued, 'token-cy'),
        (reply) => reply.task.status === 'completed',
        15_000,
      );
      const dees = await Promise.all([deeTask, deeHold].map((taskId) => detailOf(taskId, 'token-dee')));
      for (const { status, task } of dees) {
        expect(status).toBe(200);
        expect(entries(task, 'idempotent_hit')).toEqual([]);
        // Dee's task started while Cy's waited: Dee was never over its share.
        expect(entries(task, 'waiting')).toEqual([]);
      }
      expect((await detailOf(cyTask, 'token-cy')).task.timeline.map((entry: { kind: string }) => entry.kind)).toContain(
        'idempotent_hit',
      );
      for (const taskId of [cyTask, cyHold, cyQueued]) expect((await detailOf(taskId, 'token-dee')).status).toBe(404);
    });
  });
}

describePolicyTimeline('the in-process runtime', false);
describePolicyTimeline('BullMQ', true);
