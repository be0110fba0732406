/**
 * `maxRunningTasksPerPrincipal` as configured: its default, the environment variable and its
 * bounds (an error naming the variable or the option), and the engine policy that refuses a
 * share of zero.
 */
import { describe, expect, it } from 'vitest';
import { TaskEngine } from '../../src/engine/engine.js';
import { DEFAULT_TASK_POLICY } from '../../src/engine/policy.js';
import { DEFAULT_LIMITS, limitsFromEnvironment, resolveLimits } from '../../src/host/limits.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';

const VARIABLE = 'MCP_TASK_MAX_RUNNING_TASKS_PER_PRINCIPAL';

describe('maxRunningTasksPerPrincipal', () => {
  it('defaults to 64, in the server limits and the engine policy', () => {
    expect(DEFAULT_LIMITS.maxRunningTasksPerPrincipal).toBe(64);
    expect(DEFAULT_TASK_POLICY.maxRunningTasksPerOwner).toBe(64);
  });

  it(`is read from ${VARIABLE}`, () => {
    expect(limitsFromEnvironment({ [VARIABLE]: '3' })).toEqual({ maxRunningTasksPerPrincipal: 3 });
  });

  it('refuses a value that is not a positive whole number, or above the bound, naming the variable', () => {
    for (const raw of ['0', '-1', '2.5', 'many']) {
      expect(() => limitsFromEnvironment({ [VARIABLE]: raw })).toThrow(
        `${VARIABLE} must be a positive whole number, got "${raw}"`,
      );
    }
    expect(() => limitsFromEnvironment({ [VARIABLE]: '100001' })).toThrow(`${VARIABLE} must be at most 100000`);
    expect(() => resolveLimits({ maxRunningTasksPerPrincipal: 100_001 })).toThrow(
      'limits.maxRunningTasksPerPrincipal must be at most 100000',
    );
    expect(resolveLimits({ maxRunningTasksPerPrincipal: 100_000 }).maxRunningTasksPerPrincipal).toBe(100_000);
  });

  it('refuses an engine policy with a share below one', () => {
    const runtime = new MemoryTaskRuntime({
      executor: { execute: async () => ({ kind: 'error', error: { code: 1, message: '' } }) },
    });
    expect(() => new TaskEngine({ runtime, policy: { maxRunningTasksPerOwner: 0 } })).toThrow(
      'policy.maxRunningTasksPerOwner must be a whole number of 1 or more, got 0',
    );
  });
});
