/**
 * BullMQ job states → task status and message (the table below).
 * Pure functions, so the wording is tested without Redis and kept in one place.
 *
 * | job state                      | task                                    |
 * |--------------------------------|-----------------------------------------|
 * | waiting                        | working, `queued`                       |
 * | delayed by retry back-off      | working, `retrying in 4s (attempt 2 of 3)` |
 * | delayed before a method retry  | working, `attempt 2 of 5 in 4 s: ECONNRESET` |
 * | delayed for a `ctx.sleep`      | working, `sleeping until 2026-12-01T13:05:00.000Z` |
 * | active                         | working, the method's latest progress   |
 * | completed                      | the method's outcome                    |
 * | failed after the last attempt  | failed, the error (or "worker lost")    |
 * | cancelled                      | cancelled, the cancel message           |
 */

import { isRetryMessage } from '../../engine/attempts.js';
import { isCallbackWaitNote } from '../../engine/callbacks.js';
import { isQueuedNote } from '../../engine/fair-share.js';
import { isSleepNote } from '../../engine/sleeps.js';
import type { TaskOutcome, TaskRecord } from '../../engine/task.js';
import type { TaskChange } from '../../engine/transitions.js';
import { isVersionWaitNote } from '../../engine/version-pin.js';
import { JsonRpcErrorCode } from '../../jsonrpc/json-rpc-error.js';

export const QUEUED_MESSAGE = 'queued';
export const REQUEUED_AFTER_STALL_MESSAGE = 'queued again: the worker running it stopped responding';
export const REQUEUED_AFTER_SHUTDOWN_MESSAGE = 'queued again: its worker shut down';
/** Shown while a running job's lock has lapsed: its worker stopped renewing it and a live one will take the job over. */
export const WORKER_LOST_MESSAGE = 'worker lost; retrying';

/**
 * How a record reads while its job's lock is gone. A task that is working with the method's own
 * progress message (not a runtime note such as `queued`) is running, so its job holds a lock;
 * without one, the worker died and that message is stale until the job is recovered. (A task
 * with no message may be a resumed one still queued, so it is left alone.)
 */
export function withLostWorker(record: TaskRecord, lockHeld: boolean): TaskRecord {
  if (lockHeld || record.status !== 'working') return record;
  if (record.statusMessage === undefined || isRuntimeNote(record.statusMessage)) return record;
  return { ...record, statusMessage: WORKER_LOST_MESSAGE };
}

/** BullMQ's failedReason when a job exceeded `maxStalledCount` (worker.js, moveStalledJobsToWait-9.lua). */
const STALLED_REASON = 'job stalled more than allowable limit';

/**
 * A job has been running a while: the runtime's own note (`queued`, `retrying…`) gives way, and
 * the method's progress takes over. A progress message already there is left alone.
 */
export function startedChange(current: TaskRecord): TaskChange | undefined {
  return current.status === 'working' && isRuntimeNote(current.statusMessage)
    ? { status: 'working', statusMessage: null }
    : undefined;
}

/** Whether `message` is one the runtime wrote about the job, rather than the method's progress. */
export function isRuntimeNote(message: string | undefined): boolean {
  return (
    isQueuedNote(message) ||
    isVersionWaitNote(message) ||
    isSleepNote(message) ||
    isCallbackWaitNote(message) ||
    message === REQUEUED_AFTER_STALL_MESSAGE ||
    message === REQUEUED_AFTER_SHUTDOWN_MESSAGE ||
    (message?.startsWith('retrying ') ?? false) ||
    isRetryMessage(message)
  );
}

export function requeuedChange(message: string): TaskChange {
  return { status: 'working', statusMessage: message };
}

/**
 * The job failed an attempt and BullMQ will run it again: after `delayMs` (back-off), or at
 * once when `delayMs` is 0. `attemptsMade` counts the attempts used so far.
 */
export function retryChange(delayMs: number, attemptsMade: number, attempts: number): TaskChange {
  const attempt = `attempt ${attemptsMade + 1} of ${attempts}`;
  const statusMessage = delayMs > 0 ? `retrying in ${formatDelay(delayMs)} (${attempt})` : `retrying now (${attempt})`;
  return { status: 'working', statusMessage };
}

/** The job failed for good: its last attempt failed, or it stalled too often. */
export function finalFailureOutcome(failedReason: string): TaskOutcome {
  const message =
    failedReason === STALLED_REASON
      ? 'The worker running this task was lost: it stopped responding, and the task used up its recoveries'
      : failedReason || 'The task failed in its worker';
  return { kind: 'error', error: { code: JsonRpcErrorCode.InternalError, message } };
}

function formatDelay(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds}s`;
  return `${Math.round(seconds / 60)}min`;
}
