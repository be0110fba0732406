/**
 * Task followers: many followers share one runtime subscription and one read per task, and a
 * version is delivered only when it is newer than the last one delivered, even when several
 * versions carry the same `lastUpdatedAt`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskEngine } from '../../src/engine/engine.js';
import { isNewer, TaskFollower } from '../../src/engine/follow.js';
import { MAX_QUIET_RECHECK_MS, QUIET_RECHECK_MS } from '../../src/engine/follower-registry.js';
import type { ExecutionControl, TaskExecutor, TaskListener } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';

/** The memory runtime, counting what followers cost it, with a way to cut its events. */
class CountingRuntime extends MemoryTaskRuntime {
  subscriptions = 0;
  reads = 0;
  /** Events are lost while set, and no gap is reported: as a broken cluster bus link loses them. */
  losingEvents = false;
  private readonly gapListeners = new Set<() => void>();
  private readonly eventListeners = new Set<TaskListener>();

  override subscribe(listener: TaskListener, onGap?: () => void): () => void {
    this.subscriptions++;
    this.eventListeners.add(listener);
    if (onGap) this.gapListeners.add(onGap);
    const unsubscribe = super.subscribe((event) => {
      if (!this.losingEvents) listener(event);
    });
    return () => {
      this.subscriptions--;
      this.eventListeners.delete(listener);
      if (onGap) this.gapListeners.delete(onGap);
      unsubscribe();
    };
  }

  override async get(taskId: string): Promise<TaskRecord | undefined> {
    this.reads++;
    return super.get(taskId);
  }

  /** As if the event connection dropped and came back. */
  gap(): void {
    for (const onGap of this.gapListeners) onGap();
  }

  /** An event arriving late, as a re-delivery of an old version would. */
  replay(record: TaskRecord): void {
    for (const listener of this.eventListeners) listener({ record });
  }
}

/** Runs each task until the test says how it goes: `step(message)` reports progress, `finish()` ends it. */
class SteppedExecutor implements TaskExecutor {
  private readonly controls = new Map<string, { control: ExecutionControl; finish: () => void }>();

  execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    return new Promise((resolve) => {
      this.controls.set(record.taskId, {
        control,
        finish: () => resolve({ kind: 'result', result: { content: [] }, isError: false }),
      });
    });
  }

  async running(taskId: string): Promise<{ control: ExecutionControl; finish: () => void }> {
    for (;;) {
      const entry = this.controls.get(taskId);
      if (entry) return entry;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

function setUp(clock: () => number = Date.now) {
  const executor = new SteppedExecutor();
  const runtime = new CountingRuntime({ executor, clock });
  const engine = new TaskEngine({ runtime, clock });
  return { executor, runtime, engine, caller: { principal: 'p' } };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('followers share what following costs', () => {
  it('holds one runtime subscription for any number of followers, and none once they are gone', async () => {
    const { executor, runtime, engine, caller } = setUp();
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    const waits = Array.from({ length: 25 }, () => engine.waitForTerminal(caller, task.taskId));
    await flush();
    expect(engine.waiterStats()).toEqual({ waiters: 25, followers: 25, followedTasks: 25 });
    expect(runtime.subscriptions).toBe(1);

    (await executor.running(task.taskId)).finish();
    const ended = await Promise.all(waits);
    expect(ended.map((record) => record.status)).toEqual(ended.map(() => 'completed'));
    expect(runtime.subscriptions).toBe(0);
    expect(engine.waiterStats()).toEqual({ waiters: 0, followers: 0, followedTasks: 0 });
    await runtime.close();
  });

  it('reads a task once after a gap, however many follow it, and hands each follower what changed', async () => {
    const { executor, runtime, engine, caller } = setUp();
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    const other = await engine.create(caller, { tool: 'stepped', args: {} });
    const seen: string[][] = [];
    const followers = Array.from({ length: 10 }, (_, index) => {
      const messages: string[] = [];
      seen.push(messages);
      const follower = new TaskFollower(engine, caller, {
        onChange: (record) =>
          messages.push(`${record.taskId === task.taskId ? 'task' : 'other'}:${record.statusMessage}`),
        onGone: () => {},
      });
      // Half of them follow the other task too.
      return { follower, both: index % 2 === 0 };
    });
    for (const { follower, both } of followers) {
      await follower.follow(task.taskId);
      if (both) await follower.follow(other.taskId);
    }
    const { control } = await executor.running(task.taskId);
    for (const messages of seen) messages.length = 0;

    control.report({ message: 'step 1' });
    await flush();
    expect(seen.every((messages) => messages.join() === 'task:step 1')).toBe(true);

    runtime.reads = 0;
    runtime.gap();
    await flush();
    // One read per followed task, not one per follower; nothing new, so nothing delivered again.
    expect(runtime.reads).toBe(2);
    expect(seen.every((messages) => messages.join() === 'task:step 1')).toBe(true);

    for (const { follower } of followers) follower.close();
    expect(runtime.subscriptions).toBe(0);
    await runtime.close();
  });
});

describe('which version is newer', () => {
  it('delivers every version written in one millisecond, in order, and never an older one after a newer', async () => {
    const { executor, runtime, engine, caller } = setUp(() => 5_000);
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    const { control } = await executor.running(task.taskId);
    const delivered: TaskRecord[] = [];
    const follower = new TaskFollower(engine, caller, {
      onChange: (record) => delivered.push(record),
      onGone: () => {},
    });
    await follower.follow(task.taskId);
    delivered.length = 0;

    control.report({ message: 'a' });
    control.report({ message: 'b' });
    control.report({ message: 'a' });
    await flush();
    expect(delivered.map((record) => record.statusMessage)).toEqual(['a', 'b', 'a']);
    expect(new Set(delivered.map((record) => record.lastUpdatedAt))).toEqual(new Set([5_000]));

    // The 'b' version arrives again, late: same millisecond, other content, but older.
    runtime.replay(delivered[1] as TaskRecord);
    await flush();
    expect(delivered).toHaveLength(3);
    follower.close();
    await runtime.close();
  });

  it('orders by revision, and records without one by time, then by what a client sees', () => {
    const base: TaskRecord = {
      taskId: 't',
      owner: null,
      tool: 'x',
      args: {},
      status: 'working',
      createdAt: 1,
      lastUpdatedAt: 10,
      ttlMs: null,
      pollIntervalMs: 1000,
    };
    expect(isNewer({ ...base, revision: 3, statusMessage: 'a' }, { ...base, revision: 2, statusMessage: 'a' })).toBe(
      true,
    );
    expect(isNewer({ ...base, revision: 2, statusMessage: 'b' }, { ...base, revision: 3, statusMessage: 'a' })).toBe(
      false,
    );
    // Written before revisions existed.
    expect(isNewer({ ...base, lastUpdatedAt: 11 }, base)).toBe(true);
    expect(isNewer({ ...base, statusMessage: 'moved' }, base)).toBe(true);
    expect(isNewer({ ...base, progress: { progress: 1 } }, base)).toBe(true);
    expect(isNewer({ ...base, steps: { s: 1 } }, base)).toBe(false);
    expect(isNewer({ ...base, statusMessage: 'late' }, { ...base, status: 'cancelled' })).toBe(false);
  });
});

describe('a follower that fails', () => {
  it('does not keep a change from the other followers of the task', async () => {
    const { executor, runtime, engine, caller } = setUp();
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    const { control } = await executor.running(task.taskId);
    const heard: string[] = [];
    const failing = new TaskFollower(engine, caller, {
      onChange: (record) => {
        if (record.statusMessage === 'boom') throw new Error('handler failed');
      },
      onGone: () => {},
    });
    const healthy = new TaskFollower(engine, caller, {
      onChange: (record) => heard.push(String(record.statusMessage)),
      onGone: () => {},
    });
    await failing.follow(task.taskId);
    await healthy.follow(task.taskId);
    control.report({ message: 'boom' });
    await flush();
    expect(heard.at(-1)).toBe('boom');
    failing.close();
    healthy.close();
    await runtime.close();
  });
});

describe('events lost without a gap', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads a quiet followed task again, so an end whose event was lost still reaches its waiter', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { executor, runtime, engine, caller } = setUp();
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    let ended: TaskRecord | undefined;
    const waiting = engine.waitForTerminal(caller, task.taskId).then((record) => {
      ended = record;
    });
    const { finish } = await executor.running(task.taskId);
    await vi.advanceTimersByTimeAsync(QUIET_RECHECK_MS / 2);
    runtime.losingEvents = true;
    finish();
    await vi.advanceTimersByTimeAsync(QUIET_RECHECK_MS / 4);
    expect((await runtime.get(task.taskId))?.status).toBe('completed');
    expect(ended).toBeUndefined();
    // Quiet since it was followed: read again, and the end is delivered.
    await vi.advanceTimersByTimeAsync(QUIET_RECHECK_MS);
    expect(ended?.status).toBe('completed');
    await waiting;
    await runtime.close();
  });

  it('reads a quiet task less and less often, again often after an event, and not at all once unfollowed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { executor, runtime, engine, caller } = setUp();
    const task = await engine.create(caller, { tool: 'stepped', args: {} });
    const { control } = await executor.running(task.taskId);
    const followers = Array.from(
      { length: 5 },
      () => new TaskFollower(engine, caller, { onChange: () => {}, onGone: () => {} }),
    );
    for (const follower of followers) await follower.follow(task.taskId);
    runtime.reads = 0;
    const readsAfter = async (ms: number) => {
      await vi.advanceTimersByTimeAsync(ms);
      return runtime.reads;
    };
    // One read per task however many follow it, at 2, then 4 more, then 8 more seconds.
    expect(await readsAfter(QUIET_RECHECK_MS - 1)).toBe(0);
    expect(await readsAfter(1)).toBe(1);
    expect(await readsAfter(2 * QUIET_RECHECK_MS - 1)).toBe(1);
    expect(await readsAfter(1)).toBe(2);
    expect(await readsAfter(4 * QUIET_RECHECK_MS)).toBe(3);
    // Never more than a minute apart.
    runtime.reads = 0;
    expect(await readsAfter(10 * MAX_QUIET_RECHECK_MS)).toBeGreaterThanOrEqual(9);
    // An event: the task is not quiet, and the next quiet spell is checked soon again.
    control.report({ message: 'moving' });
    await vi.advanceTimersByTimeAsync(0);
    runtime.reads = 0;
    expect(await readsAfter(QUIET_RECHECK_MS - 1)).toBe(0);
    expect(await readsAfter(1)).toBe(1);
    for (const follower of followers) follower.close();
    runtime.reads = 0;
    expect(await readsAfter(10 * MAX_QUIET_RECHECK_MS)).toBe(0);
    await runtime.close();
  });
});
