/**
 * The load the failover tests put on one shard while its primary dies: a few creators in a
 * loop, each acknowledged task id kept with the time of its acknowledgement, and the check
 * afterwards of which acknowledged tasks survived the promotion.
 */
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import type { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { newRecord } from '../bullmq/support.js';

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
export function recordOnShard(runtime: BullmqTaskRuntime, shard: number, overrides: Partial<NewTaskRecord> = {}) {
  for (;;) {
    const record = newRecord({}, { ttlMs: 600_000, ...overrides });
    if (runtime.names.shardOf(record.taskId).index === shard) return record;
  }
}

/** One acknowledged create. */
export interface Acknowledged {
  readonly taskId: string;
  readonly at: number;
}

/** Creators running until `stop()`, and what they saw. */
export interface CreateLoad {
  readonly acknowledged: Acknowledged[];
  /** Times of failed creates, with their messages. */
  readonly failures: { readonly at: number; readonly message: string }[];
  /** The first create acknowledged at or after `since`. */
  firstAckAfter(since: number, timeoutMs: number): Promise<number>;
  stop(): Promise<void>;
}

export function startCreateLoad(runtime: BullmqTaskRuntime, shard: number, creators = 4): CreateLoad {
  const acknowledged: Acknowledged[] = [];
  const failures: { at: number; message: string }[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      try {
        const created = await runtime.create(recordOnShard(runtime, shard));
        acknowledged.push({ taskId: created.taskId, at: Date.now() });
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
        const first = acknowledged.find((ack) => ack.at >= since);
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
): Promise<{ taskId: string; msBeforeKill: number }[]> {
  const lost: { taskId: string; msBeforeKill: number }[] = [];
  for (const ack of acknowledged) {
    if (!(await runtime.get(ack.taskId))) lost.push({ taskId: ack.taskId, msBeforeKill: killAt - ack.at });
  }
  return lost;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
