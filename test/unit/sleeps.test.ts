/**
 * `ctx.sleep` without a runtime: durations and their bounds, the wake time kept from the first
 * call, the refusal past the TTL, replay keys per call site, and how the note reads on the
 * wire, in the dashboard timeline, in `mcp-task watch`, in the logs and on `/metrics`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDisplay } from '../../cli/task/display.js';
import { sleepingUntil } from '../../src/client/index.js';
import { TaskTimelines } from '../../src/dashboard/timeline.js';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { ExecutionControl } from '../../src/engine/runtime.js';
import {
  isAsleep,
  isSleepNote,
  MAX_SLEEP_MS,
  plannedWake,
  sleepChange,
  sleepNote,
  sleepNoteUntil,
  wokeChange,
} from '../../src/engine/sleeps.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { Task, type TaskContext } from '../../src/index.js';
import { logObserver } from '../../src/observe/log.js';
import { TaskMetrics } from '../../src/observe/metrics.js';
import { isRuntimeNote, withLostWorker } from '../../src/runtime/bullmq/status-mapping.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import { parseDuration } from '../../src/tools/duration.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const record: TaskRecord = {
  taskId: 't-1',
  owner: 'ann',
  tool: 'nap',
  args: {},
  status: 'working',
  createdAt: 1_000_000,
  lastUpdatedAt: 1_000_000,
  ttlMs: 3_600_000,
  pollIntervalMs: 1000,
};

describe('parseDuration', () => {
  it('takes milliseconds and numbers with ms, s, m, h or d, rounding up to a whole millisecond', () => {
    expect(parseDuration(0)).toBe(0);
    expect(parseDuration(1500)).toBe(1500);
    expect(parseDuration(0.2)).toBe(1);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration(' 3 s ')).toBe(3000);
    expect(parseDuration('365d')).toBe(MAX_SLEEP_MS);
  });

  it('refuses a negative, non-finite, unparseable or over-long duration, naming the value', () => {
    expect(() => parseDuration(-1)).toThrow(
      new RangeError('ctx.sleep: the duration must be 0 or more milliseconds, got -1'),
    );
    expect(() => parseDuration(Number.NaN)).toThrow('got NaN');
    expect(() => parseDuration(Number.POSITIVE_INFINITY)).toThrow('got Infinity');
    expect(() => parseDuration('soon')).toThrow(
      /"soon" is not a duration; give milliseconds or a number with ms, s, m, h or d/,
    );
    expect(() => parseDuration('-5s')).toThrow('"-5s" is not a duration');
    expect(() => parseDuration('5 weeks')).toThrow('"5 weeks" is not a duration');
    expect(() => parseDuration('')).toThrow('"" is not a duration');
    expect(() => parseDuration('366d')).toThrow('ctx.sleep: "366d" is longer than the longest sleep, 365 days');
    expect(() => parseDuration(null as unknown as number)).toThrow('got object');
  });
});

describe('sleeps in the record', () => {
  it('keep the wake time of the first call: a replay gets it back whatever the duration and clock', () => {
    const until = plannedWake(record, 'sleep', 60_000, 1_000_500);
    expect(until).toBe(1_060_500);
    const change = sleepChange(record, 'sleep', until);
    expect(change).toEqual({ status: 'working', statusMessage: sleepNote(until), sleeps: { sleep: until } });
    const asleep = { ...record, sleeps: { sleep: until }, statusMessage: sleepNote(until) };
    expect(plannedWake(asleep, 'sleep', 5, 9_999_999)).toBe(until);
    expect(sleepChange(asleep, 'sleep', until)).toBeUndefined();
    expect(isAsleep(asleep, until - 1)).toBe(true);
    expect(isAsleep(asleep, until)).toBe(false);
    expect(wokeChange(asleep, until)).toEqual({ status: 'working', statusMessage: null });
    expect(wokeChange({ ...asleep, statusMessage: 'page 2' }, until)).toBeUndefined();
    expect(sleepChange({ ...record, status: 'cancelled' }, 'sleep', until)).toBeUndefined();
  });

  it("refuses a sleep that would outlast the task's TTL, naming the sleep's end and the expiry", () => {
    expect(() => plannedWake(record, 'sleep-2', 3_600_000, 1_000_000)).toThrow(
      new RangeError(
        "ctx.sleep('sleep-2') of 60 min would end at 1970-01-01T01:16:40.000Z, after the task expires at " +
          '1970-01-01T01:16:40.000Z (its TTL is 60 min): sleep less, or create the task with a longer TTL',
      ),
    );
    // Without a TTL there is nothing to outlast.
    expect(plannedWake({ ...record, ttlMs: null }, 'sleep', MAX_SLEEP_MS, 0)).toBe(MAX_SLEEP_MS);
  });

  it('read the same on the wire: the note the server writes is the one the client and the BullMQ status mapping recognise', () => {
    const until = Date.UTC(2026, 11, 1, 13, 5);
    const note = sleepNote(until);
    expect(note).toBe('sleeping until 2026-12-01T13:05:00.000Z');
    expect(isSleepNote(note)).toBe(true);
    expect(sleepNoteUntil(note)).toBe(until);
    expect(sleepingUntil(note)?.getTime()).toBe(until);
    expect(sleepingUntil('sleeping until tomorrow')).toBeUndefined();
    expect(isSleepNote('sleeping until tomorrow')).toBe(false);
    // A sleeping task's job holds no lock: its note is the runtime's, not a lost worker's.
    expect(isRuntimeNote(note)).toBe(true);
    const asleep = { ...record, statusMessage: note };
    expect(withLostWorker(asleep, false)).toBe(asleep);
  });
});

class Napper {
  @Task()
  async nap(input: { script: string }, ctx: TaskContext): Promise<string> {
    if (input.script === 'three') {
      await ctx.sleep(10);
      await ctx.sleep('1s');
      await ctx.sleep(5, { name: 'cool-down' });
      await ctx.sleep('2m', { name: 'cool-down' });
      return 'ok';
    }
    if (input.script === 'bad') await ctx.sleep('forever' as '1s');
    if (input.script === 'unnamed') await ctx.sleep(1, { name: '' });
    return 'never';
  }
}

function napRegistry(): ToolRegistry {
  return new ToolRegistry({
    manifest: defineTaskManifest({
      formatVersion: 1,
      tools: [
        defineTaskTool<Napper, { script: string }>({
          name: 'nap',
          taskSupport: 'optional',
          inputSchema: { type: 'object' },
          input: z.strictObject({ script: z.string() }),
          result: 'text',
          target: { class: Napper, method: 'nap' },
          source: 'napper.ts:3:3',
          invoke: (target, args, ctx) => target.nap(args, ctx as TaskContext),
        }),
      ],
    }),
    instances: [new Napper()],
  });
}

function control(sleeps: [string, number][]): ExecutionControl {
  return {
    signal: new AbortController().signal,
    report() {},
    ask: () => Promise.reject(new Error('no questions here')),
    step: (_name, run) => run(),
    sleep: async (key, durationMs) => {
      sleeps.push([key, durationMs]);
    },
  };
}

describe('ctx.sleep in the tool layer', () => {
  it('keys each sleep by name and occurrence, as questions are, so a replay meets the same keys', async () => {
    const registry = napRegistry();
    for (let run = 0; run < 2; run++) {
      const sleeps: [string, number][] = [];
      const outcome = await registry.execute({ ...record, args: { script: 'three' } }, control(sleeps));
      expect(outcome).toMatchObject({ kind: 'result', isError: false });
      expect(sleeps).toEqual([
        ['sleep', 10],
        ['sleep#2', 1000],
        ['cool-down', 5],
        ['cool-down#2', 120_000],
      ]);
    }
  });

  it('fails the method with the reason for a bad duration or name, before the runtime hears of it', async () => {
    const registry = napRegistry();
    const sleeps: [string, number][] = [];
    const bad = await registry.execute({ ...record, args: { script: 'bad' } }, control(sleeps));
    expect(JSON.stringify(bad)).toContain('\\"forever\\" is not a duration');
    const unnamed = await registry.execute({ ...record, args: { script: 'unnamed' } }, control(sleeps));
    expect(JSON.stringify(unnamed)).toContain("a sleep's name is 1 to 100 characters");
    expect(sleeps).toEqual([]);
  });

  it('waits in place on a call without a task, and a cancel ends the wait', async () => {
    const registry = napRegistry();
    const controller = new AbortController();
    const running = registry.runInline(registry.get('nap'), { script: 'three' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    // The second sleep (1 s) is cut short by the abort: the call ends as a tool error at once.
    const started = Date.now();
    const outcome = await running;
    expect(Date.now() - started).toBeLessThan(900);
    expect(JSON.stringify(outcome)).toContain('cancelled');
  });
});

describe('a sleep shown', () => {
  const until = Date.UTC(2026, 11, 1, 13, 5);
  const task = { taskId: 't-1', tool: 'nap', principal: 'ann' };
  const parked: LifecycleEvent = { type: 'parked', task, reason: 'sleep', key: 'sleep', until };
  const woke: LifecycleEvent = { type: 'woke', task, reason: 'sleep', key: 'sleep', until, lateMs: 12 };

  it('on the dashboard timeline: the sleep from its note, its end where the note gives way, from the records alone', () => {
    const timelines = new TaskTimelines(() => 5);
    timelines.record(record);
    timelines.observe(parked);
    timelines.record({
      ...record,
      lastUpdatedAt: 2_000_000,
      statusMessage: sleepNote(until),
      sleeps: { sleep: until },
    });
    timelines.observe(woke);
    const ended = { ...record, lastUpdatedAt: 3_000_000, sleeps: { sleep: until } };
    timelines.record(ended);
    expect(timelines.of(ended).map(({ kind, text }) => [kind, text])).toEqual([
      ['created', 'created (kept until 1970-01-01T01:16:40.000Z)'],
      ['parked', 'sleeping until 2026-12-01T13:05:00.000Z'],
      ['woke', 'woke (slept until 2026-12-01T13:05:00.000Z)'],
    ]);
    // A cancel ends the sleep without a wake.
    const cancelled = new TaskTimelines();
    cancelled.record({ ...record, statusMessage: sleepNote(until) });
    const entries = cancelled.of({
      ...record,
      lastUpdatedAt: 2_000_000,
      status: 'cancelled',
      statusMessage: 'cancelled',
    });
    expect(entries.map((entry) => entry.kind)).toEqual(['created', 'parked', 'status', 'message']);
  });

  it('in mcp-task watch: the sleep, then "woke" when the note gives way', () => {
    const lines: string[] = [];
    const display = createDisplay(false, (line) => lines.push(line));
    const snapshot = (statusMessage?: string, status = 'working') =>
      ({ taskId: 't-1', status, ...(statusMessage && { statusMessage }) }) as never;
    display.status(snapshot(sleepNote(until)));
    display.status(snapshot(sleepNote(until)));
    display.status(snapshot('page 2 of 3'));
    display.status(snapshot(sleepNote(until + 1000)));
    display.status(snapshot('stopped', 'cancelled'));
    expect(lines).toEqual([
      'status: working - sleeping until 2026-12-01T13:05:00.000Z\n',
      'woke: slept until 2026-12-01T13:05:00.000Z\n',
      'status: working - page 2 of 3\n',
      'status: working - sleeping until 2026-12-01T13:05:01.000Z\n',
      'status: cancelled - stopped\n',
    ]);
  });

  it('in the logs: one line when it parks, one when it wakes', () => {
    const lines: [string, Record<string, unknown> | undefined][] = [];
    const write = (message: string, data?: Record<string, unknown>) => lines.push([message, data]);
    const observer = logObserver({ debug: write, info: write, warn: write, error: write }, 'worker');
    observer.observe(parked);
    observer.observe(woke);
    expect(lines).toEqual([
      [
        'task parked (sleep) until 2026-12-01T13:05:00.000Z',
        expect.objectContaining({ event: 'parked', reason: 'sleep', key: 'sleep', until: '2026-12-01T13:05:00.000Z' }),
      ],
      ['task woke (sleep)', expect.objectContaining({ event: 'woke', reason: 'sleep', lateMs: 12 })],
    ]);
  });

  it('on /metrics: parked tasks by reason, beside the tasks by status', async () => {
    const metrics = new TaskMetrics({
      stats: async () => ({ tasks: { working: 3 }, parked: { input: 1, sleep: 2 } }),
    });
    const { body } = await metrics.render();
    expect(body).toContain('mcp_task_parked_tasks{reason="input"} 1');
    expect(body).toContain('mcp_task_parked_tasks{reason="sleep"} 2');
    expect(body).toContain('mcp_task_tasks{status="working"} 3');
  });
});
