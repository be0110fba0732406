/**
 * The app's tools driven by a real MCP client, with the test kit of mcp-task-server: the server
 * runs in this process, and each test runs in both task dialects (2026-07-28 and 2025-11-25),
 * and on BullMQ too when REDIS_URL is set.
 */
import { createTestHarness, expectStatusSequence, harnessMatrix, type TestHarness } from 'mcp-task-server/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { app } from '../src/app.js';

let harness: TestHarness;

afterEach(() => harness?.close());

describe.each(harnessMatrix())('count_primes (%s)', ({ dialect, runtime }) => {
  it('runs as a task and returns its report', async () => {
    harness = await createTestHarness(app, { dialect, runtime });
    const task = await harness.call('count_primes', { below: 100_000 });
    await expectStatusSequence(task, ['working', 'completed']);
    expect((await task.result()).structuredContent).toEqual({ below: 100_000, count: 9592, largest: 99_991 });
  });

  it('asks before a long count, and counts once the answer is yes', async () => {
    harness = await createTestHarness(app, { dialect, runtime, answers: { goAhead: { start: true } } });
    const task = await harness.call('count_primes', { below: 2_000_000 });
    await expectStatusSequence(task, ['working', 'input_required', 'working', 'completed']);
    expect((await task.result()).structuredContent).toEqual({ below: 2_000_000, count: 148_933, largest: 1_999_993 });
  });

  it('ends with a tool error when the answer is no', async () => {
    harness = await createTestHarness(app, { dialect, runtime, answers: { goAhead: { start: false } } });
    const task = await harness.call('count_primes', { below: 2_000_000 });
    const result = await task.result();
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'Not started: the count was declined.' }]);
    // A tool error ends a 2025-11-25 task as `failed`, a 2026-07-28 task as `completed`.
    expect((await task.status()).status).toBe(dialect === '2025' ? 'failed' : 'completed');
  });

  it('stops a running count when the task is cancelled', async () => {
    harness = await createTestHarness(app, { dialect, runtime, answers: { goAhead: { start: true } } });
    const task = await harness.call('count_primes', { below: 1_000_000_000 });
    for await (const event of task.events) {
      if (event.type === 'status' && event.task.statusMessage?.startsWith('checked')) break;
    }
    expect((await task.cancel()).status).toBe('cancelled');
    await expect(task.result()).rejects.toMatchObject({ code: 'task_cancelled' });
  });

  it('refuses arguments that do not fit the input schema', async () => {
    harness = await createTestHarness(app, { dialect, runtime });
    await expect(harness.call('count_primes', { below: 1 })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('below: Too small'),
    });
  });
});

describe('is_prime', () => {
  it('answers at once, without a task', async () => {
    harness = await createTestHarness(app);
    const prime = await harness.call('is_prime', { n: 97 });
    expect(prime.taskId).toBeUndefined();
    expect((await prime.result()).structuredContent).toEqual({ n: 97, prime: true });
    expect((await (await harness.call('is_prime', { n: 91 })).result()).structuredContent).toEqual({
      n: 91,
      prime: false,
      divisor: 7,
    });
  });
});
