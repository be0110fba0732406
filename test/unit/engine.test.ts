import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/engine/cursor.js';
import { newTaskId, TaskEngine } from '../../src/engine/engine.js';
import { DEFAULT_TASK_POLICY, resolvePollInterval, resolveTtl } from '../../src/engine/policy.js';
import type { TaskRuntime } from '../../src/engine/runtime.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { applyChange, outcomeChange } from '../../src/engine/transitions.js';

const record: TaskRecord = {
  taskId: 't1',
  owner: null,
  tool: 'tool',
  args: {},
  status: 'working',
  createdAt: 1_000,
  lastUpdatedAt: 1_000,
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
};
const ok = { kind: 'result', result: { content: [] }, isError: false } as const;

describe('TTL and poll interval policy', () => {
  const policy = { ...DEFAULT_TASK_POLICY, defaultTtlMs: 10_000, maxTtlMs: 60_000 };

  it('prefers the client, then the tool, then the server default', () => {
    expect(resolveTtl(5_000, 20_000, policy)).toBe(5_000);
    expect(resolveTtl(undefined, 20_000, policy)).toBe(20_000);
    expect(resolveTtl(undefined, undefined, policy)).toBe(10_000);
  });

  it('caps every request at the server maximum, including a request for unlimited', () => {
    expect(resolveTtl(10_000_000, undefined, policy)).toBe(60_000);
    expect(resolveTtl(null, undefined, policy)).toBe(60_000);
    expect(resolveTtl(null, undefined, { ...policy, maxTtlMs: null })).toBeNull();
  });

  it('never hands out a fractional TTL, nor one below the floor', () => {
    expect(resolveTtl(0, undefined, policy)).toBe(1000);
    expect(resolveTtl(300, undefined, policy)).toBe(1000);
    expect(resolveTtl(1_500.7, undefined, policy)).toBe(1_500);
    expect(resolveTtl(300, undefined, { ...policy, minTtlMs: 100 })).toBe(300);
  });

  it('refuses a policy whose floor is above its cap, naming both', () => {
    expect(() => new TaskEngine({ runtime: undefined as never, policy: { minTtlMs: 5000, maxTtlMs: 1000 } })).toThrow(
      /policy.maxTtlMs \(1000\) must not be below policy.minTtlMs \(5000\)/,
    );
  });

  it('keeps poll intervals above the floor', () => {
    expect(resolvePollInterval(10, policy)).toBe(DEFAULT_TASK_POLICY.minPollIntervalMs);
    expect(resolvePollInterval(undefined, policy)).toBe(DEFAULT_TASK_POLICY.defaultPollIntervalMs);
    expect(resolvePollInterval(2_500, policy)).toBe(2_500);
  });
});

describe('state machine', () => {
  it('moves forward and records the outcome', () => {
    const done = applyChange(record, outcomeChange(ok), 2_000);
    expect(done).toMatchObject({ status: 'completed', lastUpdatedAt: 2_000, outcome: ok });
  });

  it('keeps terminal states sticky', () => {
    const cancelled = applyChange(record, { status: 'cancelled', statusMessage: 'cancelled by client' }, 2_000);
    expect(() => applyChange(cancelled, outcomeChange(ok), 3_000)).toThrow(/already cancelled/);
    expect(() => applyChange(cancelled, { status: 'working' }, 3_000)).toThrow();
  });

  it('refuses completion without an outcome', () => {
    expect(() => applyChange(record, { status: 'completed' }, 2_000)).toThrow(/without an outcome/);
  });

  it('keeps, replaces or clears the status message as asked', () => {
    const withMessage = applyChange(record, { status: 'working', statusMessage: 'step 1' }, 2_000);
    expect(applyChange(withMessage, { status: 'input_required' }, 2_001).statusMessage).toBe('step 1');
    expect(applyChange(withMessage, { status: 'working', statusMessage: null }, 2_001).statusMessage).toBeUndefined();
  });

  it('never moves lastUpdatedAt backwards', () => {
    expect(applyChange({ ...record, lastUpdatedAt: 5_000 }, { status: 'working' }, 4_000).lastUpdatedAt).toBe(5_000);
  });

  it('keeps a SEP-1686 task for its keepAlive after it ends, within its original cap', () => {
    const shim = { ...record, ttlMs: 3_600_000, keepAliveMs: 5_000 };
    expect(applyChange(shim, outcomeChange(ok), 61_000).ttlMs).toBe(65_000);
    expect(applyChange(shim, { status: 'working', statusMessage: 'x' }, 61_000).ttlMs).toBe(3_600_000);
    expect(applyChange({ ...shim, ttlMs: 10_000 }, outcomeChange(ok), 61_000).ttlMs).toBe(10_000);
  });

  it('takes a failed task message from the JSON-RPC error, and a tool error message from its text', () => {
    const failed = outcomeChange({ kind: 'error', error: { code: -32603, message: 'boom' } });
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'boom' });
    const toolError = outcomeChange({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'bad input' }], isError: true },
      isError: true,
    });
    expect(toolError).toMatchObject({ status: 'completed', statusMessage: 'bad input' });
  });
});

describe('cursors and ids', () => {
  it('round-trips a position and rejects anything else with INVALID_CURSOR', () => {
    const position = { createdAt: 1_700_000_000_000, taskId: 'abc_-1' };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    for (const bad of [
      '',
      'xyz',
      Buffer.from('[2,1,"a"]').toString('base64url'),
      Buffer.from('{}').toString('base64url'),
    ]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
    }
  });

  it('mints 128-bit, URL- and Redis-key-safe task ids that never start like a command-line option', () => {
    // One draw in 32 starts with `-` or `_`; 5,000 draws miss both with odds of about 1e-70.
    const ids = new Set(Array.from({ length: 5000 }, newTaskId));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/);
  });
});

describe('waiting for a task', () => {
  it("never answers one principal with another principal's task, even from an event", async () => {
    // A runtime whose read is slow, and which announces alice's task finishing meanwhile.
    const listeners = new Set<(event: { record: TaskRecord }) => void>();
    const alicesTask: TaskRecord = { ...record, owner: 'alice', status: 'completed', outcome: ok };
    const runtime = {
      kind: 'slow',
      durable: false,
      subscribe: (listener: (event: { record: TaskRecord }) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      get: async () => {
        for (const listener of listeners) listener({ record: alicesTask });
        await new Promise((resolve) => setTimeout(resolve, 20));
        return alicesTask;
      },
    } as unknown as TaskRuntime;
    const engine = new TaskEngine({ runtime });
    await expect(engine.waitForTerminal({ principal: 'bob' }, record.taskId)).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
    });
    await expect(engine.waitForTerminal({ principal: 'alice' }, record.taskId)).resolves.toMatchObject({
      status: 'completed',
    });
  });
});
