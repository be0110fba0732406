/**
 * The issue-import example against a stub issue tracker on a local port (no internet): pages
 * fetched with retries on 503 and 429, no retry on 404, the question before many pages (both
 * answers), and a cancel that aborts the request in flight. Driven by the v1 SDK client.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { TaskCall } from 'mcp-task-server/client';
import { createTestHarness } from 'mcp-task-server/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectV1, pollUntil, type RunningServer, startServer } from '../../test/e2e/support.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { IssueImporter, type IssuePage } from './src/issue-importer.js';

const PER_PAGE = 2;

/** The stub tracker: projects with a number of pages, and failures to serve before the real answer. */
interface Stub {
  readonly url: string;
  readonly requests: string[];
  /** Per `project/page`: status codes to answer before succeeding (`hang` never answers). */
  readonly failures: Map<string, (number | 'hang')[]>;
  /** Requests the client abandoned before they were answered. */
  readonly abandoned: string[];
  close(): Promise<void>;
}

async function startStub(projects: Record<string, number>): Promise<Stub> {
  const stub = { requests: [] as string[], failures: new Map(), abandoned: [] as string[] } as Omit<
    Stub,
    'url' | 'close'
  >;
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stub');
    const match = /^\/api\/projects\/([^/]+)\/issues$/.exec(url.pathname);
    const project = match ? decodeURIComponent(match[1]!) : '';
    const page = Number(url.searchParams.get('page'));
    const key = `${project}/${page}`;
    stub.requests.push(key);
    const totalPages = projects[project];
    if (totalPages === undefined || !(page >= 1 && page <= totalPages)) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const failure = stub.failures.get(key)?.shift();
    if (failure === 'hang') {
      response.once('close', () => stub.abandoned.push(key));
      return;
    }
    if (failure !== undefined) {
      response.writeHead(failure, failure === 429 ? { 'retry-after': '0' } : {}).end();
      return;
    }
    const body: IssuePage = {
      page,
      totalPages,
      issues: Array.from({ length: PER_PAGE }, (_, index) => ({
        id: (page - 1) * PER_PAGE + index + 1,
        title: `Issue ${page}.${index}`,
        state: index === 0 ? 'open' : 'closed',
      })),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...stub,
    url: `http://127.0.0.1:${port}/api`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  } as Stub;
}

let stub: Stub;
let running: RunningServer;
let client: Client;
let answer: ElicitResult;
let asked: string[];

beforeAll(async () => {
  stub = await startStub({ 'acme/small': 2, 'acme/big': 5, 'acme/slow': 1 });
  // Short backoff, so retries take milliseconds here; the defaults wait 250 ms, 500 ms, 1 s.
  const importer = new IssueImporter(stub.url, { attempts: 3, baseDelayMs: 10, maxDelayMs: 50, timeoutMs: 5_000 });
  running = await startServer({ manifest: taskManifest, instances: [importer] });
  client = await connectV1(running.url, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return answer;
  });
});

afterAll(async () => {
  await client?.close();
  await running?.close();
  await stub?.close();
});

beforeEach(() => {
  stub.requests.length = 0;
  stub.failures.clear();
  answer = { action: 'cancel' };
  asked = [];
});

async function importAsTask(args: Record<string, unknown>) {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'import_issues', arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
  return { taskId: created.task.taskId, result };
}

describe('import_issues', () => {
  it('fetches every page, retrying a 503 and a 429 until they pass', async () => {
    stub.failures.set('acme/small/1', [503]);
    stub.failures.set('acme/small/2', [429, 502]);
    const { result } = await importAsTask({ project: 'acme/small' });
    expect(result.structuredContent).toEqual({
      project: 'acme/small',
      pages: 2,
      totalPages: 2,
      issues: 4,
      open: 2,
      closed: 2,
      retries: 3,
    });
    expect(stub.requests).toEqual(['acme/small/1', 'acme/small/1', 'acme/small/2', 'acme/small/2', 'acme/small/2']);
    expect(asked).toEqual([]);
  });

  it('gives up after its attempts, with a tool error that says why', async () => {
    stub.failures.set('acme/small/1', [503, 503, 503]);
    const { result } = await importAsTask({ project: 'acme/small' });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('gave up after 3 attempts: HTTP 503');
    expect(stub.requests).toHaveLength(3);
  });

  it('does not retry a 404', async () => {
    const { result } = await importAsTask({ project: 'acme/missing' });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('HTTP 404');
    expect(stub.requests).toEqual(['acme/missing/1']);
  });

  it('asks before fetching many pages, and fetches them all on yes', async () => {
    answer = { action: 'accept', content: { confirm: true } };
    const { result } = await importAsTask({ project: 'acme/big' });
    expect(asked).toEqual(['acme/big has 5 pages of issues. Fetch them all?']);
    expect(result.structuredContent).toMatchObject({ pages: 5, totalPages: 5, issues: 10 });
    // The first page, fetched before the question, was not fetched again.
    expect(stub.requests).toEqual(['acme/big/1', 'acme/big/2', 'acme/big/3', 'acme/big/4', 'acme/big/5']);
  });

  it('keeps to the first page on no', async () => {
    answer = { action: 'accept', content: { confirm: false } };
    const { result } = await importAsTask({ project: 'acme/big', askAbovePages: 4 });
    expect(asked).toHaveLength(1);
    expect(result.structuredContent).toMatchObject({ pages: 1, totalPages: 5, issues: 2 });
    expect(stub.requests).toEqual(['acme/big/1']);
  });

  it('aborts the request in flight when the task is cancelled', async () => {
    stub.failures.set('acme/slow/1', ['hang']);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'import_issues', arguments: { project: 'acme/slow' }, task: {} } },
      CreateTaskResultSchema,
    );
    await pollUntil(
      async () => stub.requests,
      (requests) => requests.includes('acme/slow/1'),
      10_000,
    );
    expect((await client.experimental.tasks.cancelTask(created.task.taskId)).status).toBe('cancelled');
    await pollUntil(
      async () => stub.abandoned,
      (abandoned) => abandoned.includes('acme/slow/1'),
      10_000,
    );
    expect(stub.requests).toEqual(['acme/slow/1']);
  });
});

describe('import_issues with a pause between pages', () => {
  it('sleeps between pages on the test kit clock: advancing it wakes the task, and the pages are fetched once each', async () => {
    const importer = new IssueImporter(stub.url, { attempts: 1, baseDelayMs: 10, maxDelayMs: 10, timeoutMs: 5_000 });
    const harness = await createTestHarness({ manifest: taskManifest, instances: [importer] });
    try {
      const call = await harness.call('import_issues', { project: 'acme/small', pauseBetweenPagesMs: 600_000 });
      const asleep = await waitForStatus(call, (message) => message?.startsWith('sleeping until') ?? false);
      // Ten minutes from now, by the harness clock, and the second page not fetched yet.
      const until = Date.parse(asleep.replace('sleeping until ', ''));
      expect(until - harness.clock.now()).toBeGreaterThan(590_000);
      expect(stub.requests).toEqual(['acme/small/1']);
      harness.clock.advance(600_000);
      const result = await call.result();
      expect(result.structuredContent).toMatchObject({ pages: 2, issues: 4 });
      expect(stub.requests).toEqual(['acme/small/1', 'acme/small/2']);
    } finally {
      await harness.close();
    }
  });
});

/** The first status message of `call` that `accept` takes. */
async function waitForStatus(call: TaskCall, accept: (message: string | undefined) => boolean): Promise<string> {
  for await (const event of call.events) {
    if (event.type === 'status' && accept(event.task.statusMessage)) return event.task.statusMessage as string;
  }
  throw new Error('the task ended first');
}
