import { retryMessage } from './attempts.js';

/**
 * Engine errors are data: a stable `code` the protocol adapters map to JSON-RPC, and a message
 * that names the task and the rule.
 */

export type TaskErrorCode =
  /** Unknown, expired, or owned by another principal: indistinguishable on purpose. */
  | 'TASK_NOT_FOUND'
  /** A change to a task that already reached a terminal status. */
  | 'TASK_TERMINAL'
  | 'INVALID_CURSOR'
  /** Listing needs an identified caller. */
  | 'LISTING_UNAVAILABLE'
  /** The runtime could not store or read the task (e.g. Redis unreachable). */
  | 'RUNTIME_UNAVAILABLE'
  /** A client-chosen task id (SEP-1686) that is already taken. */
  | 'DUPLICATE_TASK'
  /** A quota of the caller is used up (see `LimitExceededError`). */
  | 'LIMIT_EXCEEDED'
  /** An idempotency key that is empty, too long or has characters it may not have. */
  | 'INVALID_IDEMPOTENCY_KEY'
  /** An idempotency key already used, within its window, for a call with other arguments. */
  | 'IDEMPOTENCY_CONFLICT'
  /** A call's own priority that is not a whole number in range. */
  | 'INVALID_PRIORITY';

export class TaskError extends Error {
  override readonly name: string = 'TaskError';
  constructor(
    readonly code: TaskErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A bound on what one caller may hold or send, named as it is configured, with its value. */
export class LimitExceededError extends TaskError {
  override readonly name: string = 'LimitExceededError';
  constructor(
    readonly limit: string,
    readonly value: number,
    message: string,
  ) {
    super('LIMIT_EXCEEDED', message);
  }
}

export function taskNotFound(taskId: string): TaskError {
  return new TaskError('TASK_NOT_FOUND', `Failed to retrieve task: Task not found (${taskId})`);
}

/**
 * Thrown by `ExecutionControl.ask` when the runtime will not hold the method while a person
 * answers: the run unwinds, the task waits (`input_required`) without using a worker, and the
 * method runs again from the top once answered, replaying the answers and `step` results.
 * Code that catches errors around `ctx.input` must let it through (see `isTaskPaused`).
 */
export class TaskPaused extends Error {
  override readonly name: string = 'TaskPaused';
  constructor(
    readonly keys: readonly string[],
    /**
     * What the task waits for without a worker when it is not an answer (a sleep, a callback,
     * child tasks), and until when at the latest.
     */
    readonly wait?: DurableWait,
  ) {
    super(
      wait
        ? `The task is parked (${wait.reason})${wait.until !== undefined ? ` until ${new Date(wait.until).toISOString()}` : ''}`
        : `The task is paused until ${keys.map((key) => `'${key}'`).join(', ')} is answered`,
    );
  }
}

/**
 * A wait a task spends parked, holding no worker, other than for an answer: `reason` names it
 * as the `mcp_task_parked_tasks` gauge does, `until` is when it ends (ms since the epoch).
 */
export interface DurableWait {
  readonly reason: 'sleep' | 'callback' | 'children';
  /** When the wait ends at the latest (a sleep's wake time, a callback's timeout). */
  readonly until?: number;
}

/**
 * Whether `error` is the `TaskPaused` signal. A method that catches errors around `ctx.input`
 * rethrows what this accepts, so the run can unwind while the task waits for its answer.
 */
export function isTaskPaused(error: unknown): error is TaskPaused {
  return error instanceof TaskPaused;
}

/**
 * Thrown by `TaskExecutor.execute` when an attempt failed and its tool's retry policy allows
 * another: the runtime leaves the task `working` with `message` as its status, frees the run's
 * slot, and runs it again (attempt `next`) after `delayMs`, with `ExecutionControl.attempt` set
 * to `next` and the steps stored so far. Not a failure of the task.
 */
export class AttemptFailed extends Error {
  override readonly name = 'AttemptFailed';
  constructor(
    /** The attempt that runs next (1-based). */
    readonly next: number,
    /** Attempts in all, the first one included. */
    readonly attempts: number,
    readonly delayMs: number,
    /** Why the attempt failed: the thrown message, or the timeout. */
    readonly reason: string,
  ) {
    super(retryMessage(next, attempts, delayMs, reason));
  }
}

/** Whether `error` is the executor's `AttemptFailed` verdict. */
export function isAttemptFailed(error: unknown): error is AttemptFailed {
  return error instanceof AttemptFailed;
}
