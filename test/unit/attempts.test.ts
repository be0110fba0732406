/**
 * Retry and timeout policies in the tool layer: the back-off arithmetic and wording, the
 * registry's start-up check of hand-written manifests, what one attempt's end becomes
 * (`AttemptFailed`, an outcome), and the lifecycle log lines and counters it produces.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AttemptTimeoutError,
  formatDuration,
  isRetryMessage,
  type RetryPolicy,
  retryDelayMs,
  retryMessage,
  retryPolicyProblems,
} from '../../src/engine/attempts.js';
import { AttemptFailed } from '../../src/engine/errors.js';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { ExecutionControl } from '../../src/engine/runtime.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { NonRetryableError, Task, type TaskContext } from '../../src/index.js';
import { logObserver } from '../../src/observe/log.js';
import { TaskMetrics } from '../../src/observe/metrics.js';
import { defineTaskManifest, defineTaskTool, type TaskToolDefinition } from '../../src/tools/definition.js';
import { ManifestError } from '../../src/tools/errors.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { captureLogger } from '../observe/ops-app.js';

const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({
  attempts: 5,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 10_000,
  jitter: false,
  ...overrides,
});

describe('back-off', () => {
  it('doubles from delayMs up to maxDelayMs when exponential, and stays put when fixed', () => {
    expect([1, 2, 3, 4, 5, 6].map((failed) => retryDelayMs(policy(), failed))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect([1, 2, 3].map((failed) => retryDelayMs(policy({ backoff: 'fixed' }), failed))).toEqual([1000, 1000, 1000]);
  });

  it('spreads a jittered wait over the upper half of the delay', () => {
    const jittered = policy({ jitter: true });
    expect(retryDelayMs(jittered, 3, () => 0)).toBe(2000);
    expect(retryDelayMs(jittered, 3, () => 0.999_999)).toBe(4000);
    expect(retryDelayMs(jittered, 3, () => 0.5)).toBe(3000);
  });

  it('says which attempt comes next, when and why, and knows its own note', () => {
    const message = retryMessage(2, 5, 4000, 'ECONNRESET');
    expect(message).toBe('attempt 2 of 5 in 4 s: ECONNRESET');
    expect(isRetryMessage(message)).toBe(true);
    expect(isRetryMessage('attempt to connect')).toBe(false);
    expect([250, 1500, 30_000, 180_000].map(formatDuration)).toEqual(['250 ms', '1.5 s', '30 s', '3 min']);
    expect(new AttemptTimeoutError(30_000).message).toBe('timed out after 30 s');
  });

  it('names every problem of a policy that cannot work', () => {
    expect(retryPolicyProblems({ attempts: 5, backoff: 'fixed', delayMs: 0 }, 100)).toEqual([]);
    expect(retryPolicyProblems({ attempts: 0 })).toEqual([
      'retry.attempts must be a whole number of 1 or more (it counts the first run), got 0',
    ]);
    expect(retryPolicyProblems({ attempts: 1.5 })[0]).toContain('got 1.5');
    expect(retryPolicyProblems({ backoff: 'linear' as 'fixed' })[0]).toContain("'exponential' or 'fixed'");
    expect(retryPolicyProblems({ delayMs: -1 })[0]).toContain('retry.delayMs');
    expect(retryPolicyProblems({ delayMs: 5000, maxDelayMs: 100 })).toEqual([
      'retry.maxDelayMs (100) must not be below retry.delayMs (5000)',
    ]);
    expect(retryPolicyProblems(undefined, -5)).toEqual(['timeoutMs must be a positive number of milliseconds, got -5']);
  });
});

class Upstream {
  @Task()
  async fetch(input: { mode: string }, ctx: TaskContext): Promise<{ attempt: number }> {
    if (input.mode === 'throw') throw new Error('ECONNRESET');
    if (input.mode === 'refuse') throw new NonRetryableError('gone for good');
    if (input.mode === 'hang') await new Promise(() => {});
    if (input.mode === 'ask') await ctx.input('go');
    return { attempt: ctx.attempt };
  }
}

function manifest(options: Pick<TaskToolDefinition, 'retry' | 'timeoutMs'>) {
  return defineTaskManifest({
    formatVersion: 1,
    tools: [
      defineTaskTool<Upstream, { mode: string }>({
        name: 'fetch',
        taskSupport: 'optional',
        inputSchema: { type: 'object' },
        input: z.strictObject({ mode: z.string() }),
        result: 'json',
        target: { class: Upstream, method: 'fetch' },
        source: 'upstream.ts:3:3',
        invoke: (target, args, ctx) => target.fetch(args, ctx),
        questions: [{ name: 'go', schema: { type: 'object' }, answer: z.object({}) }],
        ...options,
      }),
    ],
  });
}

function registryWith(options: Pick<TaskToolDefinition, 'retry' | 'timeoutMs'>, observed: LifecycleEvent[] = []) {
  return new ToolRegistry({
    manifest: manifest(options),
    instances: [new Upstream()],
    timeoutGraceMs: 20,
    observer: { observe: (event) => observed.push(event) },
  });
}

function record(mode: string): TaskRecord {
  return {
    taskId: 'task-1',
    owner: 'alice',
    tool: 'fetch',
    args: { mode },
    status: 'working',
    createdAt: Date.now(),
    lastUpdatedAt: Date.now(),
    ttlMs: 60_000,
    pollIntervalMs: 1000,
  };
}

function control(attempt?: number): ExecutionControl {
  return {
    signal: new AbortController().signal,
    ...(attempt !== undefined && { attempt }),
    report: () => {},
    ask: () => Promise.reject(new Error('no questions here')),
    step: (_name, run) => run(),
  };
}

describe('the registry', () => {
  it('refuses at start-up a hand-written manifest whose policy cannot work, naming tool and field', () => {
    expect(() => registryWith({ retry: { attempts: 0 } })).toThrow(ManifestError);
    expect(() => registryWith({ retry: { attempts: 0 } })).toThrow(/fetch \(upstream\.ts:3:3\): retry\.attempts/);
    expect(() => registryWith({ retry: { backoff: 'linear' as 'fixed' } })).toThrow(/retry\.backoff/);
    expect(() => registryWith({ retry: { delayMs: 10, maxDelayMs: 5 } })).toThrow(/maxDelayMs \(5\)/);
    expect(() => registryWith({ timeoutMs: -1 })).toThrow(/timeoutMs must be a positive number/);
  });

  it('turns a throw with attempts left into AttemptFailed, and passes ctx.attempt', async () => {
    const observed: LifecycleEvent[] = [];
    const registry = registryWith({ retry: { attempts: 3, delayMs: 100 } }, observed);
    const failed = await registry.execute(record('throw'), control(2)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(AttemptFailed);
    expect(failed).toMatchObject({ next: 3, attempts: 3, delayMs: 200, reason: 'ECONNRESET' });
    expect((failed as Error).message).toBe('attempt 3 of 3 in 200 ms: ECONNRESET');
    expect(observed.find((event) => event.type === 'retry_scheduled')).toMatchObject({
      attempt: 2,
      attempts: 3,
      delayMs: 200,
      reason: 'ECONNRESET',
    });
    expect(await registry.execute(record('ok'), control(3))).toMatchObject({
      result: { content: [{ type: 'text', text: '{"attempt":3}' }] },
    });
  });

  it('fails on the last attempt and on a NonRetryableError, with the error as the result', async () => {
    const registry = registryWith({ retry: { attempts: 3 } });
    expect(await registry.execute(record('throw'), control(3))).toMatchObject({ kind: 'result', isError: true });
    expect(await registry.execute(record('refuse'), control(1))).toEqual({
      kind: 'result',
      isError: true,
      result: { content: [{ type: 'text', text: 'gone for good' }], isError: true },
    });
  });

  it('abandons a hung attempt after the grace: a retry when attempts remain, else a failure naming the timeout', async () => {
    const observed: LifecycleEvent[] = [];
    const retrying = registryWith({ timeoutMs: 30, retry: { attempts: 2, delayMs: 10 } }, observed);
    await expect(retrying.execute(record('hang'), control(1))).rejects.toMatchObject({
      next: 2,
      reason: 'timed out after 30 ms',
    });
    expect(observed.find((event) => event.type === 'timed_out')).toMatchObject({ attempt: 1, timeoutMs: 30 });
    const single = registryWith({ timeoutMs: 30 });
    expect(await single.execute(record('hang'), control())).toEqual({
      kind: 'error',
      error: { code: -32603, message: 'fetch timed out after 30 ms' },
    });
  });

  it('stops the clock while the method waits for an answer', async () => {
    const registry = registryWith({ timeoutMs: 50 });
    const slowAnswer = () =>
      new Promise<{ action: 'accept' }>((resolve) => setTimeout(() => resolve({ action: 'accept' }), 200));
    const outcome = await registry.execute(record('ask'), { ...control(), ask: slowAnswer });
    expect(outcome).toMatchObject({ kind: 'result', isError: false });
  });

  it('does not retry a cancelled attempt', async () => {
    const registry = registryWith({ timeoutMs: 1000, retry: { attempts: 3 } });
    const controller = new AbortController();
    controller.abort(new Error('cancelled'));
    const outcome = await registry.execute(record('throw'), { ...control(1), signal: controller.signal });
    expect(outcome).toMatchObject({ kind: 'result', isError: true });
  });
});

describe('visibility', () => {
  const task = { taskId: 'task-1', tool: 'fetch', principal: 'alice' };

  it('logs a scheduled retry and a timeout with their fields, never the arguments', () => {
    const captured = captureLogger();
    const observer = logObserver(captured.logger, 'worker');
    observer.observe({ type: 'retry_scheduled', task, attempt: 1, attempts: 5, delayMs: 400, reason: 'ECONNRESET' });
    observer.observe({ type: 'timed_out', task, attempt: 2, attempts: 5, timeoutMs: 30_000 });
    expect(captured.lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'task attempt 1 of 5 failed; retrying'],
      ['warn', 'task attempt 2 of 5 timed out'],
    ]);
    expect(captured.lines[0]?.data).toMatchObject({ event: 'retry_scheduled', attempt: 1, attempts: 5, delayMs: 400 });
    expect(captured.lines[1]?.data).toMatchObject({ event: 'timed_out', attempt: 2, timeoutMs: 30_000 });
    expect(JSON.stringify(captured.lines)).not.toContain('args');
  });

  it('counts retries and timeouts per tool on /metrics', async () => {
    const metrics = new TaskMetrics();
    metrics.observe({ type: 'retry_scheduled', task, attempt: 1, attempts: 5, delayMs: 400, reason: 'x' });
    metrics.observe({ type: 'retry_scheduled', task, attempt: 2, attempts: 5, delayMs: 800, reason: 'x' });
    metrics.observe({ type: 'timed_out', task, attempt: 2, attempts: 5, timeoutMs: 1000 });
    const text = await metrics.registry.metrics();
    expect(text).toContain('mcp_task_retries_total{tool="fetch"} 2');
    expect(text).toContain('mcp_task_timeouts_total{tool="fetch"} 1');
  });
});
