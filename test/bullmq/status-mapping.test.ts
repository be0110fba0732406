import { describe, expect, it } from 'vitest';
import { TaskTimelines } from '../../src/dashboard/timeline.js';
import type { TaskRecord } from '../../src/engine/task.js';
import {
  finalFailureOutcome,
  isRuntimeNote,
  retryChange,
  startedChange,
} from '../../src/runtime/bullmq/status-mapping.js';

describe('BullMQ job state → task status wording', () => {
  it('describes a retry back-off with the delay and the coming attempt', () => {
    expect(retryChange(4000, 1, 3)).toEqual({ status: 'working', statusMessage: 'retrying in 4s (attempt 2 of 3)' });
    expect(retryChange(250, 2, 3).statusMessage).toBe('retrying in 250ms (attempt 3 of 3)');
    expect(retryChange(0, 1, 5).statusMessage).toBe('retrying now (attempt 2 of 5)');
    expect(retryChange(300_000, 1, 3).statusMessage).toBe('retrying in 5min (attempt 2 of 3)');
  });

  it('says the worker was lost when BullMQ gave up on a stalled job, and keeps other reasons', () => {
    expect(finalFailureOutcome('job stalled more than allowable limit')).toMatchObject({
      kind: 'error',
      error: { code: -32603, message: expect.stringContaining('worker running this task was lost') },
    });
    expect(finalFailureOutcome('connection reset')).toEqual({
      kind: 'error',
      error: { code: -32603, message: 'connection reset' },
    });
  });

  it('treats the wait for a method retry as its own note: the next attempt clears it for its progress', () => {
    expect(isRuntimeNote('attempt 2 of 5 in 4 s: ECONNRESET')).toBe(true);
    expect(isRuntimeNote('attempt the upload')).toBe(false);
    const waiting = { status: 'working', statusMessage: 'attempt 2 of 5 in 4 s: ECONNRESET' } as TaskRecord;
    expect(startedChange(waiting)).toEqual({ status: 'working', statusMessage: null });
  });

  it('shows each retry on the dashboard timeline', () => {
    const timelines = new TaskTimelines();
    const base = {
      taskId: 't-1',
      owner: 'alice',
      tool: 'fetch',
      args: {},
      status: 'working',
      createdAt: 1,
      ttlMs: 60_000,
      pollIntervalMs: 1000,
    } as const;
    timelines.record({ ...base, lastUpdatedAt: 1 });
    timelines.record({ ...base, lastUpdatedAt: 2, statusMessage: 'attempt 2 of 3 in 1 s: timed out after 30 s' });
    const entries = timelines.of({ ...base, lastUpdatedAt: 2 });
    expect(entries.map((entry) => entry.text)).toContain('attempt 2 of 3 in 1 s: timed out after 30 s');
  });
});
