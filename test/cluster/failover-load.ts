/**
 * The load the failover tests put on one shard while its primary dies: a few creators in a
 * loop, each acknowledged task id kept with the time of its acknowledgement, and the check
 * afterwards of which acknowledged tasks survived the promotion. Free of vitest, so
 * `bench/failover.ts` runs it from plain Node.
 */

import { newTaskId } from '../../src/engine/engine.js';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import type { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';

/** Finishes every task after a few milliseconds of "work", keeping the ids it ran. */
export class ShortWork implements TaskExecutor {
  readonly ran = new Set<string>();
  async execute(record: TaskRecord) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.ran.add(record.taskId);
    return { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };
  }
}

/** A new record whose id falls on `shard`. */
export function recordOnShard(runtime: BullmqTaskRuntime, shard: number): NewTaskRecord {
  for (;;) {
    const taskId = newTaskId();
    if (runtime.names.shardOf(taskId).index !== shard) continue;
    const now = Date.now();
    return {
      taskId,
      owner: 'alice',
      tool: 't',
      args: {},
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: 600_000,
      pollIntervalMs: 1000,
    };
  }
}

/** One acknowledged create. */
export interface Acknowledged {
  readonly taskId: string;
  /** When the create was sent, and when it was acknowledged. */
  readonly sentAt?: number;
  readonly at: number;
}

/** Creators running until `stop()`, and what they saw. */
export interface CreateLoad {
  readonly acknowledged: Acknowledged[];
  /** Times of failed creates, with their messages. */
  readonly failures: { readonly at: number; readonly message: string }[];
  /** When the first create sent at or after `since` was acknowledged. */
  firstAckAfter(since: number, timeoutMs: number): Promise<number>;
  stop(): Promise<void>;
}

/** `creators` loops creating tasks on `shard`, each pausing `pauseMs` between creates (so the worker keeps up). */
export function startCreateLoad(runtime: BullmqTaskRuntime, shard: number, creators = 4, pauseMs = 0): CreateLoad {
  const acknowledged: Acknowledged[] = [];
  const failures: { at: number; message: string }[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const sentAt = Date.now();
      try {
        const created = await runtime.create(recordOnShard(runtime, shard));
        acknowledged.push({ taskId: created.taskId, sentAt, at: Date.now() });
        if (pauseMs > 0) await sleep(pauseMs);
      } catch (error) {
        failures.push({ at: Date.now(), message: error instanceof Error ? error.message : String(error) });
        // A failing shard answers at once; do not spin.
        await sleep(20);
      }
    }
  };
  const loops = Array.from({ length: creators }, loop);
  return {
    acknowledged,
    failures,
    async firstAckAfter(since, timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const first = acknowledged.find((ack) => (ack.sentAt ?? ack.at) >= since);
        if (first) return first.at;
        await sleep(10);
      }
      throw new Error(`no create succeeded within ${timeoutMs} ms of the kill`);
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Acknowledged tasks whose record is gone, with their time relative to `killAt`. */
export async function lostTasks(
  runtime: BullmqTaskRuntime,
  acknowledged: readonly Acknowledged[],
  killAt: number,
): Promise<LostTask[]> {
  const lost: LostTask[] = [];
  for (const ack of acknowledged) {
    if (!(await readRetrying(runtime, ack.taskId))) {
      lost.push({ taskId: ack.taskId, msBeforeKill: killAt - ack.at, sentBeforeKill: (ack.sentAt ?? ack.at) < killAt });
    }
  }
  return lost;
}

/** An acknowledged task gone after the failover: when it was acknowledged, relative to the SIGKILL. */
export interface LostTask {
  readonly taskId: string;
  /** Negative: the reply arrived after the signal was sent (the process had not died yet). */
  readonly msBeforeKill: number;
  readonly sentBeforeKill: boolean;
}

/** Lost tasks outside the window: sent after the kill, or acknowledged long before it (more than `windowMs`) or after the process was gone. */
export function outsideWindow(lost: readonly LostTask[], windowMs: number, killMs: number): LostTask[] {
  return lost.filter((task) => !task.sentBeforeKill || task.msBeforeKill > windowMs || task.msBeforeKill < -killMs);
}

/** How lost tasks are printed. */
export function describeLost(lost: readonly LostTask[]): string {
  if (lost.length === 0) return '0 lost';
  return `${lost.length} lost (acknowledged ${lost.map((task) => `${task.msBeforeKill} ms`).join(', ')} before the SIGKILL)`;
}

/** What a create load saw around a SIGKILL at `killAt`: acknowledged before, after, and lost. */
export interface FailoverOutcome {
  readonly before: readonly Acknowledged[];
  readonly after: readonly Acknowledged[];
  readonly lost: readonly LostTask[];
}

/**
 * Splits the load's acknowledgements at the kill, finds the lost ones, and prints one line
 * (`label`, the time without creates, the counts): the numbers docs/guide/high-availability.md
 * quotes.
 */
export async function failoverOutcome(
  label: string,
  runtime: BullmqTaskRuntime,
  load: CreateLoad,
  times: { readonly killAt: number; readonly backAt: number },
): Promise<FailoverOutcome> {
  const { killAt, backAt } = times;
  const before = load.acknowledged.filter((ack) => ack.at < killAt);
  const after = load.acknowledged.filter((ack) => ack.at >= killAt);
  const lost = await lostTasks(runtime, load.acknowledged, killAt);
  console.info(
    `${label}: creates were out for ${backAt - killAt} ms after the SIGKILL; ` +
      `${before.length} acknowledged before, ${after.length} after, ${load.failures.length} refused, ` +
      `${describeLost(lost)}`,
  );
  return { before, after, lost };
}

/**
 * The acknowledged tasks that survived, polled until each completes (for `timeoutMs`); prints
 * how many did and how long it took. Returns those that did not, with their state.
 */
export async function unfinishedSurvivors(
  runtime: BullmqTaskRuntime,
  load: CreateLoad,
  lost: readonly LostTask[],
  timeoutMs: number,
): Promise<{ taskId: string; status?: string; statusMessage?: string }[]> {
  const surviving = load.acknowledged.filter((ack) => !lost.some((task) => task.taskId === ack.taskId));
  const checkFrom = Date.now();
  const left = await unfinished(
    runtime,
    surviving.map((ack) => ack.taskId),
    timeoutMs,
  );
  console.info(
    `${surviving.length - left.length} of ${surviving.length} completed, ${Date.now() - checkFrom} ms after the load stopped`,
  );
  return left;
}

/** Reads refused while the client catches up with the promotion, counted. */
export const refusedReads: { at: number; message: string }[] = [];

/** A read, retried for a few seconds while it is refused: a refusal is not an absence. */
async function readRetrying(runtime: BullmqTaskRuntime, taskId: string) {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await runtime.get(taskId);
    } catch (error) {
      if (Date.now() > until) throw error;
      refusedReads.push({ at: Date.now(), message: error instanceof Error ? error.message : String(error) });
      await sleep(50);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls the tasks until each is `completed`; returns those that are not by the deadline, with their state. */
export async function unfinished(
  runtime: BullmqTaskRuntime,
  taskIds: readonly string[],
  timeoutMs: number,
): Promise<{ taskId: string; status?: string; statusMessage?: string }[]> {
  let waiting = [...taskIds];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(
      waiting.map(async (taskId) => ({ taskId, record: await readRetrying(runtime, taskId) })),
    );
    const left = states.filter(({ record }) => record?.status !== 'completed');
    waiting = left.map(({ taskId }) => taskId);
    if (waiting.length === 0 || Date.now() > until) {
      return left.map(({ taskId, record }) => ({
        taskId,
        ...(record && { status: record.status }),
        ...(record?.statusMessage !== undefined && { statusMessage: record.statusMessage }),
      }));
    }
    await sleep(200);
  }
}
