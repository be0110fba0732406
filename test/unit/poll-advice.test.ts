/**
 * The suggested poll interval follows the tool's recorded run times: the median time left for a
 * task of its age, within the floor and the configured interval; the configured interval
 * without data. Driven by a clock the test sets, so no assertion depends on wall time.
 */
import { describe, expect, it } from 'vitest';
import { TaskEngine } from '../../src/engine/engine.js';
import { MIN_SAMPLES, RUN_SAMPLE_SIZE, RunTimes, suggestPollInterval } from '../../src/engine/poll-advice.js';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { comfortablePollMs } from '../../src/host/rate-limits.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';

const task = (createdAt: number, pollIntervalMs = 10_000) => ({ tool: 'build', createdAt, pollIntervalMs });

function withRuns(durations: readonly number[], tool = 'build'): RunTimes {
  const runTimes = new RunTimes();
  for (const [index, duration] of durations.entries()) runTimes.record(tool, `t${index}`, duration);
  return runTimes;
}

describe('suggestPollInterval', () => {
  it('suggests the configured interval while the tool has fewer than MIN_SAMPLES runs', () => {
    const runTimes = withRuns(Array.from({ length: MIN_SAMPLES - 1 }, () => 1000));
    expect(suggestPollInterval(task(0), 0, runTimes, 100)).toBe(10_000);
    runTimes.record('build', 'one-more', 1000);
    expect(suggestPollInterval(task(0), 0, runTimes, 100)).toBe(1000);
  });

  it('suggests the median time left for a task of its age', () => {
    const runTimes = withRuns([800, 1000, 1200, 1000, 5000]);
    // A new task: the median of all runs.
    expect(suggestPollInterval(task(0), 0, runTimes, 100)).toBe(1000);
    // 900 ms old: runs longer than that have 100, 100, 300, 4100 ms left; median 200.
    expect(suggestPollInterval(task(0), 900, runTimes, 100)).toBe(200);
    // Past every run but the slow one: what that one had left.
    expect(suggestPollInterval(task(0), 2000, runTimes, 100)).toBe(3000);
  });

  it('never goes below the floor, nor above the configured interval', () => {
    const runTimes = withRuns([1000, 1000, 1000]);
    expect(suggestPollInterval(task(0), 990, runTimes, 100)).toBe(100);
    expect(suggestPollInterval(task(0), 990, runTimes, 250)).toBe(250);
    expect(suggestPollInterval(task(0, 400), 0, runTimes, 100)).toBe(400);
    // The floor wins over a configured interval below it: the rate limit is never outpaced.
    expect(suggestPollInterval(task(0, 100), 0, runTimes, 200)).toBe(200);
  });

  it('falls back to the configured interval for a task that outlived every recorded run', () => {
    expect(suggestPollInterval(task(0), 1500, withRuns([1000, 1000, 1000]), 100)).toBe(10_000);
  });

  it('keeps each tool apart', () => {
    const runTimes = withRuns([1000, 1000, 1000]);
    expect(suggestPollInterval({ ...task(0), tool: 'other' }, 0, runTimes, 100)).toBe(10_000);
  });
});

describe('RunTimes', () => {
  const ended = (taskId: string, ms: number, extra: Partial<TaskRecord> = {}): TaskRecord => ({
    taskId,
    owner: null,
    tool: 'build',
    args: {},
    status: 'completed',
    createdAt: 10_000,
    lastUpdatedAt: 10_000 + ms,
    ttlMs: 60_000,
    pollIntervalMs: 10_000,
    outcome: { kind: 'result', result: { content: [] }, isError: false },
    ...extra,
  });

  it('learns from completed and failed tasks once each, and not from cancelled ones or ones that asked', () => {
    const runTimes = new RunTimes();
    runTimes.learn(ended('a', 1000));
    runTimes.learn(ended('a', 1000));
    runTimes.learn(ended('b', 1000, { status: 'failed' }));
    runTimes.learn(ended('c', 1000, { status: 'cancelled' }));
    runTimes.learn(ended('d', 1000, { inputAnswers: { confirm: { action: 'accept', content: {} } } }));
    expect(runTimes.medianTimeLeft('build', 0)).toBeUndefined();
    runTimes.learn(ended('e', 1000));
    expect(runTimes.medianTimeLeft('build', 0)).toBe(1000);
  });

  it(`keeps the last ${RUN_SAMPLE_SIZE} runs of a tool`, () => {
    const runTimes = withRuns([
      ...Array.from({ length: RUN_SAMPLE_SIZE }, () => 100),
      ...Array.from({ length: RUN_SAMPLE_SIZE }, () => 5000),
    ]);
    expect(runTimes.medianTimeLeft('build', 0)).toBe(5000);
  });
});

it('the rate floor is a tenth of the steady read rate per task', () => {
  expect(comfortablePollMs({ readsPerSecond: 500 })).toBe(20);
  expect(comfortablePollMs({ readsPerSecond: 10 })).toBe(1000);
});

describe('a task engine on a tool with a known duration', () => {
  /** A tool that takes exactly `DURATION_MS` on the test's clock: each run ends when the test moves the clock. */
  const DURATION_MS = 2000;

  it('suggests the configured interval at first, then the time left of its recorded runs', async () => {
    let now = 1_000_000;
    const finishers: (() => void)[] = [];
    const executor: TaskExecutor = {
      execute: () =>
        new Promise((resolve) => {
          finishers.push(() => resolve({ kind: 'result', result: { content: [] }, isError: false }));
        }),
    };
    const engine = new TaskEngine({
      runtime: new MemoryTaskRuntime({ executor, clock: () => now }),
      clock: () => now,
      pollFloorMs: comfortablePollMs({ readsPerSecond: 500 }),
    });
    const caller = { principal: 'alice' };
    const create = () => engine.create(caller, { tool: 'build', args: {}, toolPollIntervalMs: 30_000 });

    // No data: the configured interval.
    const first = await create();
    expect(first.pollIntervalMs).toBe(30_000);

    // Three runs of exactly DURATION_MS, read by a poll once they ended.
    const runs = [first, await create(), await create()];
    await expect.poll(() => finishers.length).toBe(3);
    now += DURATION_MS;
    for (const finish of finishers.splice(0)) finish();
    for (const run of runs) {
      await expect.poll(async () => (await engine.get(caller, run.taskId)).status).toBe('completed');
    }

    const next = await create();
    expect(next.pollIntervalMs).toBe(DURATION_MS);
    now += 1500;
    expect((await engine.get(caller, next.taskId)).pollIntervalMs).toBe(500);
    now += 450;
    // 50 ms left: the policy's minimum (100 ms) is the floor.
    expect((await engine.get(caller, next.taskId)).pollIntervalMs).toBe(100);
    now += 1000;
    // Older than every recorded run: back to the configured interval.
    expect((await engine.get(caller, next.taskId)).pollIntervalMs).toBe(30_000);
    // The stored record keeps the configured interval; only what callers see is fitted.
    expect((await engine.runtime.get(next.taskId))?.pollIntervalMs).toBe(30_000);
    await engine.runtime.close();
  });
});
