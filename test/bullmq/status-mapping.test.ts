import { describe, expect, it } from 'vitest';
import { finalFailureOutcome, retryChange } from '../../src/runtime/bullmq/status-mapping.js';

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
});
