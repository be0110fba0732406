/**
 * The test kit (`mcp-task-server/testing`) on the conformance fixture: scripted answers,
 * `expectStatusSequence`, the clock that reaches a TTL without waiting, and the same tests on
 * BullMQ in both dialects when Redis is there (failing in CI when it is not).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { isTaskNotFound } from '../../src/client/index.js';
import { createTestHarness, expectStatusSequence, harnessMatrix, type TestHarness } from '../../src/testing/index.js';
import { describeWithRedis, REDIS_URL } from '../bullmq/support.js';

const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

let harness: TestHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function suite(variant: { dialect: '2025' | '2026'; runtime: 'memory' | 'bullmq' }) {
  it('answers questions from the script and walks the expected statuses', async () => {
    harness = await createTestHarness(app, {
      ...variant,
      redisUrl: REDIS_URL,
      answers: { confirm: { confirm: true } },
    });
    const call = await harness.call('confirm_delete', { filename: 'a.txt' });
    await expectStatusSequence(call, ['working', 'input_required', 'working', 'completed']);
    expect(text(await call.result())).toBe('Deleted a.txt');
  });

  it('takes a function as the script; what it leaves out waits for the test', async () => {
    harness = await createTestHarness(app, {
      ...variant,
      redisUrl: REDIS_URL,
      answers: (question) => (question.key === 'last_name' ? { name: 'Lovelace' } : undefined),
    });
    const named = await harness.call('ask_in_turn');
    expect(await nextQuestion(named)).toBe('first_name');
    await named.answer('first_name', { name: 'Ada' });
    expect(text(await named.result())).toBe('Hello, Ada Lovelace!');
    const declined = await harness.call('confirm_delete', { filename: 'b.txt' });
    await declined.decline(await nextQuestion(declined));
    expect(text(await declined.result())).toBe('Kept b.txt');
  });

  it('rejects a wrong status sequence, naming both', async () => {
    harness = await createTestHarness(app, { ...variant, redisUrl: REDIS_URL });
    const call = await harness.call('slow_compute', { seconds: 0, label: 'x' });
    await expect(expectStatusSequence(call, ['working', 'failed'])).rejects.toThrow(
      'expected the statuses ["working","failed"], saw ["working","completed"]',
    );
  });
}

async function nextQuestion(call: Awaited<ReturnType<TestHarness['call']>>, key?: string): Promise<string> {
  for await (const event of call.events)
    if (event.type === 'question' && (key === undefined || event.question.key === key)) return event.question.key;
  throw new Error('the task ended without a question');
}

describe.each(['2026', '2025'] as const)('in-process runtime, dialect %s', (dialect) => {
  suite({ dialect, runtime: 'memory' });

  it('moves the clock past a TTL: the task is gone without waiting for it', async () => {
    harness = await createTestHarness(app, { dialect });
    const call = await harness.call('slow_compute', { seconds: 60, label: 'long' });
    const { ttlMs } = await call.status();
    expect(ttlMs).toBe(600_000);
    harness.clock.advance(599_000);
    expect((await call.status()).status).toBe('working');
    harness.clock.advance(2_000);
    await expect(call.status()).rejects.toSatisfy(isTaskNotFound);
  });
});

describeWithRedis('BullMQ runtime', () => {
  describe.each(['2026', '2025'] as const)('dialect %s', (dialect) => {
    suite({ dialect, runtime: 'bullmq' });

    it('refuses to move the clock, which Redis keeps', async () => {
      harness = await createTestHarness(app, { dialect, runtime: 'bullmq', redisUrl: REDIS_URL });
      expect(() => harness?.clock.advance(1000)).toThrow(/Redis time/);
    });
  });
});

describe('harnessMatrix', () => {
  it('offers both dialects in-process, and on BullMQ only with REDIS_URL', () => {
    expect(harnessMatrix({}).map((v) => v.name)).toEqual(['memory, 2026', 'memory, 2025']);
    expect(harnessMatrix({ REDIS_URL: 'redis://x' }).map((v) => v.name)).toEqual([
      'memory, 2026',
      'memory, 2025',
      'bullmq, 2026',
      'bullmq, 2025',
    ]);
  });

  it('says what is missing when BullMQ has no Redis URL', async () => {
    const saved = process.env.REDIS_URL;
    delete process.env.REDIS_URL;
    try {
      await expect(createTestHarness(app, { runtime: 'bullmq' })).rejects.toThrow(/needs a Redis URL/);
    } finally {
      if (saved !== undefined) process.env.REDIS_URL = saved;
    }
  });
});
