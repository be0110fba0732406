/**
 * The dashboard's timelines on their own: entries from record changes (a retry's wait, a
 * priority) and from lifecycle events (a timeout, a repeated create, a wait of any reason), in
 * the order heard, and only the owner's facts on an owner's story.
 */
import { describe, expect, it } from 'vitest';
import { TaskTimelines } from '../../src/dashboard/timeline.js';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { TaskRecord } from '../../src/engine/task.js';

const base = {
  taskId: 't-1',
  owner: 'sub:ann',
  tool: 'fetch',
  args: {},
  status: 'working',
  createdAt: 1,
  lastUpdatedAt: 1,
  ttlMs: 60_000,
  pollIntervalMs: 1000,
} as const satisfies TaskRecord;
const ann = { taskId: 't-1', tool: 'fetch', principal: 'sub:ann' };

describe('task timelines', () => {
  it('show a callback hook made, the wait, and its end, from the record', () => {
    const timelines = new TaskTimelines(() => 9);
    const hook = {
      name: 'ci',
      id: 'cb_x',
      token: 'secret-token',
      createdAt: 2,
      timeoutAt: 60_000,
      status: 'waiting' as const,
    };
    timelines.record(base);
    timelines.record({ ...base, lastUpdatedAt: 2, callbacks: { ci: hook } });
    timelines.record({ ...base, lastUpdatedAt: 3, statusMessage: 'waiting for callback ci', callbacks: { ci: hook } });
    const received = {
      ...base,
      lastUpdatedAt: 4,
      callbacks: { ci: { ...hook, status: 'received' as const, payload: { ok: 1 } } },
    };
    timelines.record(received);
    const entries = timelines.of(received);
    expect(entries.map(({ kind, text }) => [kind, text])).toEqual([
      ['created', 'created (kept until 1970-01-01T00:01:00.001Z)'],
      ['parked', 'callback ci (ci) made, times out 1970-01-01T00:01:00.000Z'],
      ['message', 'waiting for callback ci'],
      ['woke', 'callback ci (ci) received'],
    ]);
    // Neither the token nor the payload reaches the timeline.
    expect(JSON.stringify(entries)).not.toMatch(/secret-token|"ok"/);
  });

  it('name a retry wait as a retry and a priority on the creation', () => {
    const timelines = new TaskTimelines(() => 5);
    timelines.record({ ...base, priority: 3 });
    timelines.record({ ...base, priority: 3, lastUpdatedAt: 2, statusMessage: 'attempt 2 of 5 in 4 s: ECONNRESET' });
    timelines.record({ ...base, priority: 3, lastUpdatedAt: 3, statusMessage: 'page 1 of 9' });
    const entries = timelines.of({ ...base, priority: 3, lastUpdatedAt: 3, statusMessage: 'page 1 of 9' });
    expect(entries.map(({ kind, text }) => [kind, text])).toEqual([
      ['created', 'created (priority 3, kept until 1970-01-01T00:01:00.001Z)'],
      ['retry', 'attempt 2 of 5 in 4 s: ECONNRESET'],
      ['message', 'page 1 of 9'],
    ]);
    expect(new TaskTimelines().of(base)[0]?.text).toBe('created (kept until 1970-01-01T00:01:00.001Z)');
  });

  it('add timeouts, repeated creates and waits for a share or a version, and nothing for the other events', () => {
    const timelines = new TaskTimelines(() => 7);
    timelines.record(base);
    const events: LifecycleEvent[] = [
      { type: 'timed_out', task: ann, attempt: 1, attempts: 3, timeoutMs: 30_000 },
      { type: 'idempotent_hit', task: ann, status: 'working' },
      { type: 'waiting', task: ann, reason: 'principal_share', running: 2, limit: 2 },
      { type: 'waiting', task: ann, reason: 'version', version: '3', workerVersion: '4' },
      { type: 'retry_scheduled', task: ann, attempt: 1, attempts: 3, delayMs: 10, reason: 'x' },
      { type: 'progress', task: ann, message: 'page 1' },
    ];
    for (const event of events) timelines.observe(event);
    expect(timelines.of(base).slice(1)).toEqual([
      { at: 7, kind: 'timeout', text: 'attempt 1 of 3 timed out after 30 s' },
      {
        at: 7,
        kind: 'idempotent_hit',
        text: 'a repeated create with the same idempotency key returned this task (working)',
      },
      { at: 7, kind: 'waiting', text: 'waits (principal_share): 2 running, limit 2' },
      { at: 7, kind: 'waiting', text: 'waits (version): for a worker with version 3 (this one runs 4)' },
    ]);
  });

  it('keep an event heard before the first record, after the creation', () => {
    const timelines = new TaskTimelines(() => 9);
    timelines.observe({ type: 'waiting', task: ann, reason: 'principal_share', running: 1, limit: 1 });
    expect(timelines.of(base).map((entry) => entry.kind)).toEqual(['created', 'waiting']);
  });

  it("never show on a task's story an event that names another principal", () => {
    const timelines = new TaskTimelines();
    timelines.record(base);
    timelines.observe({ type: 'idempotent_hit', task: { ...ann, principal: 'sub:bob' }, status: 'working' });
    timelines.observe({ type: 'idempotent_hit', task: { ...ann, principal: null }, status: 'working' });
    expect(timelines.of(base).map((entry) => entry.kind)).toEqual(['created']);
  });
});
