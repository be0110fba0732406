/**
 * Lifecycle facts: what the engine, the runtimes and the tool layer tell observers about a
 * task as it lives. They are plain data; turning them into log lines, metrics or spans is the
 * observers' business (`src/observe/`), so nothing here formats or counts anything.
 */
import { hostname } from 'node:os';
import type { TaskStatus } from './task.js';

/** This process, as lifecycle facts name the worker running a task. */
export const PROCESS_NAME = `${hostname()}:${process.pid}`;

/** Who a fact is about: the same on every event, never the arguments or answers. */
export interface TaskFacts {
  readonly taskId: string;
  readonly tool: string;
  /** The owning principal; `null` when nothing identified the caller. */
  readonly principal: string | null;
  /** The queue job running the task, on runtimes that have jobs. */
  readonly jobId?: string;
}

/**
 * One fact in a task's life, as the engine, the runtimes and the tool layer report it to a
 * `TaskObserver`: plain data, keyed by `type`, never holding arguments or answers.
 */
export type LifecycleEvent =
  | {
      readonly type: 'created';
      readonly task: TaskFacts;
      readonly ttlMs: number | null;
      /** The task's priority when not the default 0 (lower runs first). */
      readonly priority?: number;
      /** The version of the task's tool it was accepted with (`TaskRecord.toolVersion`). */
      readonly toolVersion?: string;
    }
  /** A repeated idempotent create got this existing task; nothing new was started. */
  | { readonly type: 'idempotent_hit'; readonly task: TaskFacts; readonly status: TaskStatus }
  | {
      readonly type: 'started';
      readonly task: TaskFacts;
      /** Which process runs it (`host:pid`). */
      readonly worker: string;
      /** From creation to this run's start. */
      readonly queueWaitMs: number;
      /** The method runs again after a pause or a lost worker. */
      readonly resumed: boolean;
    }
  | {
      readonly type: 'progress';
      readonly task: TaskFacts;
      readonly message?: string;
      readonly progress?: number;
      readonly total?: number;
    }
  /**
   * The task could start but waits: `reason` says for what (`principal_share`: its principal
   * already runs `running` tasks, the `limit`). Told once per wait, before the task starts.
   */
  | {
      readonly type: 'waiting';
      readonly task: TaskFacts;
      readonly reason: 'principal_share';
      readonly running: number;
      readonly limit: number;
    }
  /**
   * A resumed task waits for a worker whose tool has the task's `version`; the worker that
   * left it runs `workerVersion`. Told once per wait.
   */
  | {
      readonly type: 'waiting';
      readonly task: TaskFacts;
      readonly reason: 'version';
      readonly version: string;
      readonly workerVersion: string;
    }
  | { readonly type: 'input_requested'; readonly task: TaskFacts; readonly key: string }
  | { readonly type: 'answered'; readonly task: TaskFacts; readonly keys: readonly string[] }
  /**
   * The task waits without a worker (`reason`: `callback` for a `ctx.callback` hook named
   * `name`); `woke` tells the end of the same wait.
   */
  | { readonly type: 'parked'; readonly task: TaskFacts; readonly reason: 'callback'; readonly name: string }
  /** A wait `parked` told of ended: for a callback, with the payload (`received`) or without (`timed_out`). */
  | {
      readonly type: 'woke';
      readonly task: TaskFacts;
      readonly reason: 'callback';
      readonly name: string;
      readonly outcome: 'received' | 'timed_out';
    }
  /**
   * A POST reached a callback URL of the task (the audit line): the hook's name, the address it
   * came from, and the HTTP status it got. Never the payload.
   */
  | {
      readonly type: 'callback_posted';
      readonly task: TaskFacts;
      readonly name: string;
      readonly source: string | undefined;
      readonly status: number;
    }
  /** The run stopped to wait for answers without holding its slot; it starts again when answered. */
  | { readonly type: 'paused'; readonly task: TaskFacts; readonly keys: readonly string[] }
  /**
   * The task waits durably, holding no worker slot (`reason`: `sleep`, a `ctx.sleep` that ends
   * at `until`; `key` is the call's replay key). Told once per wait, by the runtime.
   */
  | {
      readonly type: 'parked';
      readonly task: TaskFacts;
      readonly reason: 'sleep';
      readonly key: string;
      /** When the wait ends (ms since the epoch). */
      readonly until: number;
    }
  /** A durable wait ended and the method goes on (`lateMs`: how long after `until` it did). */
  | {
      readonly type: 'woke';
      readonly task: TaskFacts;
      readonly reason: 'sleep';
      readonly key: string;
      readonly until: number;
      readonly lateMs: number;
    }
  | {
      readonly type: 'completed';
      readonly task: TaskFacts;
      /** From creation to the end of the run. */
      readonly durationMs: number;
      readonly runMs: number;
    }
  | {
      readonly type: 'failed';
      readonly task: TaskFacts;
      readonly durationMs: number;
      readonly runMs: number;
      /** `tool_error` for an `isError` result, `error` for a JSON-RPC error. */
      readonly kind: 'tool_error' | 'error';
      readonly code?: number;
      readonly message: string;
      /** What the method threw, when it threw (carries the stack). */
      readonly cause?: unknown;
    }
  | { readonly type: 'cancelled'; readonly task: TaskFacts }
  /**
   * The task waits durably without a worker: `reason` says for what (`children`: the child
   * tasks it awaits, `count` of them, `done` ended so far). Told when the wait begins.
   */
  | {
      readonly type: 'parked';
      readonly task: TaskFacts;
      readonly reason: 'children';
      readonly count: number;
      readonly done: number;
    }
  /** A durable wait ended: the task runs on (`children`: every child it awaited has ended). */
  | { readonly type: 'woke'; readonly task: TaskFacts; readonly reason: 'children'; readonly count: number }
  /** The task started a child task (`ctx.spawn`) under `key`. */
  | {
      readonly type: 'spawned';
      readonly task: TaskFacts;
      readonly child: string;
      readonly tool: string;
      readonly key: string;
    }
  /** Deleted by its owner (SEP-1686 `tasks/delete`). */
  | { readonly type: 'deleted'; readonly task: TaskFacts }
  /** Its result (or error) was handed to its caller: the audit trail of who read what. */
  | { readonly type: 'result_read'; readonly task: TaskFacts }
  | { readonly type: 'expired'; readonly task: TaskFacts }
  /** The run ended because the process stopped or the task was cancelled while it ran. */
  | { readonly type: 'aborted'; readonly task: TaskFacts; readonly reason: string }
  | { readonly type: 'output_invalid'; readonly task: TaskFacts; readonly detail: string }
  /** An attempt failed and the tool's retry policy runs the method again after `delayMs`. */
  | {
      readonly type: 'retry_scheduled';
      readonly task: TaskFacts;
      /** The attempt that failed (1-based). */
      readonly attempt: number;
      readonly attempts: number;
      readonly delayMs: number;
      /** Why it failed: the thrown message or the timeout, never the arguments. */
      readonly reason: string;
    }
  /**
   * A worker took the task's job but found no record for it, looked again with back-off for
   * `waitedMs` (its write may still have been in flight), and then failed the job: nothing of
   * the task is left to run or to report to.
   */
  | {
      readonly type: 'orphaned';
      readonly task: TaskFacts;
      readonly waitedMs: number;
      /** Why the job failed, as its failed reason in the queue says. */
      readonly reason: string;
    }
  /** An attempt reached the tool's `timeoutMs`: its signal is aborted, and it is abandoned after a grace. */
  | {
      readonly type: 'timed_out';
      readonly task: TaskFacts;
      readonly attempt: number;
      readonly attempts: number;
      readonly timeoutMs: number;
    };

export type LifecycleType = LifecycleEvent['type'];

/**
 * Why a task that could start waits (the `reason` label of the `mcp_task_waiting_by_reason`
 * gauge): `principal_share`, its principal runs `maxRunningTasksPerPrincipal` tasks already;
 * `version`, it resumes and waits for a worker with its tool's version.
 */
export type WaitReason = 'principal_share' | 'version';

/**
 * Why a task waits without a worker (the `reason` label of `mcp_task_parked_tasks`): for
 * answers, a sleep, a callback or child tasks.
 */
export type ParkReason = 'input' | 'sleep' | 'callback' | 'children';

/** Every `ParkReason`, in the order the gauge lists them. */
export const PARK_REASONS: readonly ParkReason[] = ['input', 'sleep', 'callback', 'children'];

/**
 * Receives every `LifecycleEvent` of the tasks this process creates or runs: the hook that logs,
 * metrics and audit trails are built on. `observe` must return quickly; what it throws is
 * swallowed, so observing never breaks the work it observes.
 */
export interface TaskObserver {
  observe(event: LifecycleEvent): void;
}

export const noObserver: TaskObserver = { observe() {} };

/** One observer that passes each event to all of `observers`; one that throws never stops the others. */
export function observeAll(observers: readonly (TaskObserver | undefined)[]): TaskObserver {
  const present = observers.filter((observer): observer is TaskObserver => observer !== undefined);
  if (present.length === 0) return noObserver;
  return {
    observe(event) {
      for (const observer of present) {
        try {
          observer.observe(event);
        } catch {
          // Observing must never break the work it observes.
        }
      }
    },
  };
}

export function factsOf(record: { taskId: string; tool: string; owner: string | null }, jobId?: string): TaskFacts {
  return {
    taskId: record.taskId,
    tool: record.tool,
    principal: record.owner,
    ...(jobId !== undefined && { jobId }),
  };
}
