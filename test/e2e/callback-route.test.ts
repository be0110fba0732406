/**
 * `POST /callbacks/<token>` through the server's own route (its `fetch`, no socket): what an
 * outside system meets for each case, and what the task does meanwhile. The app is the ci-wait
 * example on a stub CI that never calls back, so every POST here is the test's own.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ciWaitApp } from '../../examples/ci-wait/app.js';
import { type StubCi, startStubCi } from '../../examples/ci-wait/src/stub-ci.js';
import type { Caller } from '../../src/engine/engine.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { createTaskServer, type TaskServer, type TaskServerOptions } from '../../src/index.js';
import type { Logger } from '../../src/observe/logger.js';
import { createTestHarness } from '../../src/testing/index.js';

const PUBLIC = 'https://tasks.example.com/base';
const ALICE: Caller = { principal: 'alice' };
const BOB: Caller = { principal: 'bob' };

/** Log lines the server wrote, to check the audit trail names no payload. */
class CapturingLogger implements Logger {
  readonly lines: { message: string; data?: Record<string, unknown> }[] = [];
  debug(): void {}
  info(message: string, data?: Record<string, unknown>): void {
    this.lines.push({ message, ...(data && { data }) });
  }
  warn(message: string, data?: Record<string, unknown>): void {
    this.lines.push({ message, ...(data && { data }) });
  }
  error(message: string, data?: Record<string, unknown>): void {
    this.lines.push({ message, ...(data && { data }) });
  }
}

describe('the callback route', () => {
  let ci: StubCi | undefined;
  let server: TaskServer | undefined;
  let logger: CapturingLogger;

  afterEach(async () => {
    await server?.close();
    await ci?.close();
    server = undefined;
    ci = undefined;
  });

  async function start(options: Partial<TaskServerOptions> = {}): Promise<TaskServer> {
    ci = await startStubCi({ durationMs: 600_000 });
    logger = new CapturingLogger();
    server = createTaskServer({ ...ciWaitApp(ci.url), logger, publicUrl: PUBLIC, ...options });
    return server;
  }

  /** Creates a run_pipeline task for `caller` and resolves with it once it waits, and the URL the CI got. */
  async function waitingTask(caller: Caller = ALICE, args: Record<string, unknown> = {}) {
    const engine = (server as TaskServer).engine;
    // The tool's TTL, as a call through the protocol gets it.
    const created = await engine.create(caller, {
      tool: 'run_pipeline',
      args: { ref: 'main', ...args },
      toolTtlMs: 7_200_000,
    });
    const waiting = await engine.waitFor(caller, created.taskId, (r) => r.statusMessage === 'waiting for callback ci');
    const job = [...(ci as StubCi).jobs.values()].at(-1);
    if (!job) throw new Error('the task started no CI job');
    return { task: waiting, url: job.notify };
  }

  async function post(url: string, body: unknown, headers: Record<string, string> = {}, from = '203.0.113.7') {
    const request = new Request(url.replace(PUBLIC, 'http://127.0.0.1/base'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: 'tasks.example.com', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const response = await (server as TaskServer).fetch(request, { remoteAddress: from });
    return {
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      headers: response.headers,
    };
  }

  const good = { jobId: 'job-1', conclusion: 'success', stats: { tests: 1, failed: 0 } };

  it('takes a payload that fits once: the task completes; a second POST gets 409 and changes nothing', async () => {
    await start();
    const { task, url } = await waitingTask();
    expect(task.status).toBe('working');
    expect(url).toMatch(/^https:\/\/tasks\.example\.com\/base\/callbacks\/[A-Za-z0-9_-]{32}$/);
    expect(await post(url, good)).toMatchObject({ status: 200, body: { status: 'received' } });
    const engine = (server as TaskServer).engine;
    const done = await engine.waitForTerminal(ALICE, task.taskId);
    expect(done.status).toBe('completed');
    const again = await post(url, { ...good, conclusion: 'failure' });
    expect(again.status).toBe(410);
    expect((await engine.get(ALICE, task.taskId)).callbacks?.ci?.payload).toEqual(good);
  });

  it('answers 409 to a second POST while the task has not finished yet', async () => {
    await start();
    const { url } = await waitingTask();
    // Two POSTs at once: exactly one is taken.
    const [first, second] = await Promise.all([post(url, good), post(url, good)]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
  });

  it('refuses a payload that does not fit with 400 naming the field; the task keeps waiting', async () => {
    await start();
    const { task, url } = await waitingTask();
    const refused = await post(url, { jobId: 'job-1', conclusion: 'maybe', stats: { tests: 'many', failed: 0 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_payload');
    expect(refused.body.message).toMatch(/conclusion/);
    expect(refused.body.message).toMatch(/stats\.tests/);
    expect(await post(url, 'not json')).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
    const still = await (server as TaskServer).engine.get(ALICE, task.taskId);
    expect(still.status).toBe('working');
    expect(still.statusMessage).toBe('waiting for callback ci');
    expect(still.callbacks?.ci?.status).toBe('waiting');
    expect((await post(url, good)).status).toBe(200);
  });

  it('answers 404 to an unknown token, 405 to a GET, and 410 to the token of a cancelled task', async () => {
    await start();
    expect((await post(`${PUBLIC}/callbacks/${'x'.repeat(32)}`, good)).status).toBe(404);
    expect((await post(`${PUBLIC}/callbacks/short`, good)).status).toBe(404);
    const get = await (server as TaskServer).fetch(new Request('http://127.0.0.1/callbacks/abc'));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const { task, url } = await waitingTask();
    await (server as TaskServer).engine.cancel(ALICE, task.taskId);
    expect(await post(url, good)).toMatchObject({ status: 410, body: { error: 'task_ended' } });
    expect((await (server as TaskServer).engine.get(ALICE, task.taskId)).status).toBe('cancelled');
  });

  it('answers 404 to the token of a deleted task', async () => {
    await start();
    const { task, url } = await waitingTask();
    await (server as TaskServer).engine.delete(ALICE, task.taskId);
    expect(await post(url, good)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('refuses a body over maxCallbackBodyBytes with 413; the task keeps waiting', async () => {
    await start({ limits: { maxCallbackBodyBytes: 1024 } });
    const { task, url } = await waitingTask();
    const big = { ...good, padding: 'x'.repeat(2000) };
    expect(await post(url, big)).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    expect((await (server as TaskServer).engine.get(ALICE, task.taskId)).callbacks?.ci?.status).toBe('waiting');
  });

  it('on the listener, answers 413 for a body over the limit before the body ends, and a bad token at once', async () => {
    await start();
    const { url } = await waitingTask();
    const listening = await (server as TaskServer).listen({ port: 0 });
    const { pathname } = new URL(url);
    const status = (path: string, chunk: string) =>
      new Promise<number>((resolve, reject) => {
        // Chunked and never ended: a server that buffered the whole body would never answer.
        const request = http.request(
          {
            host: '127.0.0.1',
            port: listening.port,
            path,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
          },
          (response) => {
            resolve(response.statusCode ?? 0);
            request.destroy();
          },
        );
        request.on('error', (error) => {
          if (!(error as NodeJS.ErrnoException).code?.startsWith('ECONNRESET')) reject(error);
        });
        request.write(chunk);
      });
    expect(await status(pathname.replace('/base', ''), `{"pad":"${'x'.repeat(70 * 1024)}`)).toBe(413);
    expect(await status('/callbacks/not-a-token', '{')).toBe(404);
    await listening.close();
  });

  it('rate-limits POSTs per token and per client address with 429 and Retry-After', async () => {
    await start({ limits: { callbackPostsPerTokenPerMinute: 2, callbackPostsPerSecond: 3 } });
    const { url } = await waitingTask();
    const bad = { nope: true };
    expect((await post(url, bad)).status).toBe(400);
    expect((await post(url, bad)).status).toBe(400);
    const limited = await post(url, bad, {}, '198.51.100.1');
    expect(limited.status).toBe(429);
    expect(limited.body.message).toMatch(/callbackPostsPerTokenPerMinute/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Per address: unknown tokens from one address are counted too (the burst is twice the rate).
    const statuses: number[] = [];
    for (let index = 0; index < 12; index++) {
      statuses.push((await post(`${PUBLIC}/callbacks/${String(index).repeat(32)}`, good, {}, '192.0.2.9')).status);
    }
    expect(statuses).toContain(404);
    expect(statuses.at(-1)).toBe(429);
  });

  it('logs each POST (task, callback name, source address, status) and never the payload', async () => {
    await start();
    const { task, url } = await waitingTask();
    await post(url, { ...good, jobId: 'secret-job-id' }, {}, '203.0.113.50');
    await (server as TaskServer).engine.waitForTerminal(ALICE, task.taskId);
    const audit = logger.lines.find((line) => line.message === 'task callback posted');
    expect(audit?.data).toMatchObject({ name: 'ci', source: '203.0.113.50', status: 200 });
    expect(JSON.stringify(logger.lines)).not.toContain('secret-job-id');
    const messages = logger.lines.map((line) => line.message);
    expect(messages).toContain('task parked (callback)');
    expect(messages).toContain('task woke (callback)');
  });

  it("keeps principals apart: one's token settles only its own task, and the answer names no task", async () => {
    await start();
    const alice = await waitingTask(ALICE);
    const bob = await waitingTask(BOB);
    expect(alice.url).not.toBe(bob.url);
    const posted = await post(bob.url, good);
    expect(posted.body).toEqual({ status: 'received' });
    const engine = (server as TaskServer).engine;
    expect((await engine.waitForTerminal(BOB, bob.task.taskId)).status).toBe('completed');
    const aliceNow: TaskRecord = await engine.get(ALICE, alice.task.taskId);
    expect(aliceNow.callbacks?.ci?.status).toBe('waiting');
    // Neither principal reaches the other's task, through the engine or by its hook.
    await expect(engine.get(BOB, alice.task.taskId)).rejects.toThrow(/not found/i);
    await expect(engine.get(ALICE, bob.task.taskId)).rejects.toThrow(/not found/i);
    expect(JSON.stringify(posted.body)).not.toContain(bob.task.taskId);
  });

  it('refuses to make a hook without a public URL, naming the settings', async () => {
    const saved = process.env.MCP_TASK_PUBLIC_URL;
    delete process.env.MCP_TASK_PUBLIC_URL;
    try {
      ci = await startStubCi({ durationMs: 600_000 });
      server = createTaskServer({ ...ciWaitApp(ci.url), logger: new CapturingLogger() });
      const created = await server.engine.create(ALICE, {
        tool: 'run_pipeline',
        args: { ref: 'main' },
        toolTtlMs: 7_200_000,
      });
      const done = await server.engine.waitForTerminal(ALICE, created.taskId);
      // The method threw: a tool error (failed on 2025-11-25, completed with isError on 2026-07-28).
      expect(done.outcome).toMatchObject({ kind: 'result', isError: true });
      expect(JSON.stringify(done.outcome)).toMatch(/set publicUrl .* or MCP_TASK_PUBLIC_URL/);
    } finally {
      if (saved !== undefined) process.env.MCP_TASK_PUBLIC_URL = saved;
    }
  });

  it('warns once at start-up when publicUrl names a public host and no proxy is trusted', async () => {
    const warnings = () =>
      logger.lines.filter((line) => line.message.includes('http.trustProxy (TRUST_PROXY) is not set'));
    await start();
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]?.message).toContain(`publicUrl is ${PUBLIC}`);
    expect(warnings()[0]?.message).toContain('callbackPostsPerSecond');
    await (server as TaskServer).close();
    await ci?.close();
    await start({ http: { trustProxy: 'loopback' } });
    expect(warnings()).toEqual([]);
    await (server as TaskServer).close();
    await ci?.close();
    // A loopback base names no proxy: local development and the test kit stay quiet.
    await start({ publicUrl: 'http://127.0.0.1:3000' });
    expect(warnings()).toEqual([]);
  });

  it('refuses a timeout past the task TTL at the call', async () => {
    await start({ policy: { maxTtlMs: 60_000 } });
    const created = await (server as TaskServer).engine.create(ALICE, {
      tool: 'run_pipeline',
      args: { ref: 'main', timeoutMs: 3_600_000 },
      toolTtlMs: 60_000,
    });
    const done = await (server as TaskServer).engine.waitForTerminal(ALICE, created.taskId);
    expect(JSON.stringify(done.outcome)).toMatch(/timeoutMs 3600000 ends after the task expires/);
  });
});

describe('the test kit and callbacks', () => {
  it('delivers a payload to a hook, and its clock drives the timeout', async () => {
    const ci = await startStubCi({ durationMs: 600_000 });
    const harness = await createTestHarness(ciWaitApp(ci.url));
    try {
      const delivered = await harness.call('run_pipeline', { ref: 'main' });
      await waitForJob(ci, 1);
      const url = ci.jobs.get('job-1')?.notify as string;
      expect(url.startsWith('http://127.0.0.1/callbacks/')).toBe(true);
      expect((await harness.deliverCallback(url, { jobId: 'job-1', conclusion: 'oops' })).status).toBe(400);
      expect((await harness.deliverCallback(url, good())).status).toBe(200);
      expect((await delivered.result()).structuredContent).toMatchObject({ conclusion: 'success' });

      // An hour-long timeout, reached by moving the clock.
      const timed = await harness.call('run_pipeline', { ref: 'main', timeoutMs: 3_600_000 });
      await waitForJob(ci, 2);
      await waitUntil(async () => (await timed.status()).statusMessage === 'waiting for callback ci');
      harness.clock.advance(3_600_001);
      expect((await timed.result()).structuredContent).toMatchObject({ conclusion: 'timed_out' });
    } finally {
      await harness.close();
      await ci.close();
    }
  });
});

function good() {
  return { jobId: 'job-1', conclusion: 'success', stats: { tests: 1, failed: 0 } };
}

async function waitForJob(ci: StubCi, count: number): Promise<void> {
  await waitUntil(async () => ci.jobs.size >= count);
}

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('timed out waiting');
}
