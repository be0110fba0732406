/**
 * With the defaults (no unaware-client settings, so `auto` with a 10 s grace time), each client
 * that cannot receive tasks drives a long task to its result, answers its question and cancels
 * one, using only plain tool calls: the v1 SDK client (2025-11-25), the v2 client (2026-07-28)
 * and the Python `mcp` client (both revisions). The three flows of a client run at once, so the
 * file waits out the grace time about once. unaware-clients.test.ts checks each step closely
 * with a short grace time; this file checks that the defaults give the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLER_KINDS, openCaller, pythonClientInstalled } from './plain-callers.js';
import {
  callView,
  resultOf,
  startUnawareServer,
  textOf,
  type UnawareServer,
  viewOf,
  waitUntil,
} from './unaware-support.js';

/** The documented default grace time. */
const DEFAULT_GRACE_MS = 10_000;

// The server's grace time alone is 10 s; the rest is a Python client's start and a few calls.
const TEST_TIMEOUT_MS = DEFAULT_GRACE_MS + 25_000;

// Without the Python client, unaware-clients.test.ts says why (and fails in CI).
const kinds = CALLER_KINDS.filter((kind) => pythonClientInstalled() || !kind.startsWith('python'));

let server: UnawareServer;

beforeAll(async () => {
  server = await startUnawareServer();
});

afterAll(() => server?.close());

describe.concurrent.each(kinds)('%s with the server defaults', (kind) => {
  it(
    'drives a 30-s task to its result, answers a question and cancels a task',
    async () => {
      const caller = await openCaller(kind, server.url);
      try {
        const job = `defaults-${kind}`;
        const startedAt = Date.now();
        const [held, asked, doomed] = await Promise.all([
          caller.call('hold_job', { label: job, seconds: 30 }),
          caller.call('triage_file', { filename: `${job}.txt` }),
          caller.call('hold_job', { label: `${job}-cancel`, seconds: 30 }),
        ]);
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(DEFAULT_GRACE_MS - 50);

        const handle = viewOf(resultOf(held, 'hold_job'), 'hold_job');
        expect(handle.status).toBe('working');
        server.tools.release(job);
        expect(await waitUntil(caller, handle.taskId)).toMatchObject({ status: 'completed' });
        const result = resultOf(await caller.call('task_result', { taskId: handle.taskId }), 'task_result');
        expect(result.structuredContent).toEqual({ label: job, released: true });

        const started = viewOf(resultOf(asked, 'triage_file'), 'triage_file');
        const question = started.question
          ? started
          : await waitUntil(caller, started.taskId, (view) => view.status === 'input_required' && !!view.question);
        expect(question.status).toBe('input_required');
        expect(question.question?.fields.map((field) => field.name)).toEqual(['action']);
        const answered = resultOf(
          await caller.call('task_answer', {
            taskId: question.taskId,
            question: question.question?.question,
            answer: { action: 'keep' },
          }),
          'task_answer',
        );
        expect(answered.isError ?? false, textOf(answered)).toBe(false);
        await waitUntil(caller, question.taskId);
        const kept = resultOf(await caller.call('task_result', { taskId: question.taskId }), 'task_result');
        expect(textOf(kept)).toBe(`${job}.txt: keep`);

        const cancelled = viewOf(resultOf(doomed, 'hold_job'), 'hold_job');
        expect((await callView(caller, 'task_cancel', { taskId: cancelled.taskId })).status).toBe('cancelled');
        expect(await server.tools.ended(`${job}-cancel`)).toBe('stopped');
      } finally {
        await caller.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
