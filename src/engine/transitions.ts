/**
 * The task state machine, as pure functions every runtime writes through. Terminal is sticky:
 * a method that finishes after its task was cancelled cannot resurrect it.
 */
import { TaskError } from './errors.js';
import { truncateStatusMessage } from './sizes.js';
import {
  type CallbackState,
  type InputAnswer,
  isTerminal,
  type PendingInput,
  type TaskOutcome,
  type TaskProgressValue,
  type TaskRecord,
  type TaskStatus,
} from './task.js';

const ALLOWED: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ['working', 'input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['input_required', 'working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

export interface TaskChange {
  readonly status: TaskStatus;
  /** `undefined` keeps the current message; `null` clears it. */
  readonly statusMessage?: string | null;
  readonly outcome?: TaskOutcome;
  /** Replace the outstanding questions (`{}` withdraws them all). */
  readonly inputRequests?: Readonly<Record<string, PendingInput>>;
  readonly inputAnswers?: Readonly<Record<string, InputAnswer>>;
  readonly steps?: Readonly<Record<string, unknown>>;
  /** Replaces the task's sleeps (see `TaskRecord.sleeps`). */
  readonly sleeps?: Readonly<Record<string, number>>;
  /** Replaces the task's callback hooks (see `TaskRecord.callbacks`). */
  readonly callbacks?: Readonly<Record<string, CallbackState>>;
  readonly progress?: TaskProgressValue;
  /** Sets the task's `toolVersion` (a fresh task takes the version of the worker that runs it). */
  readonly toolVersion?: string;
  /** Replaces the task's children (see `TaskRecord.children`). */
  readonly children?: TaskRecord['children'];
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function applyChange(record: TaskRecord, change: TaskChange, now: number): TaskRecord {
  if (!canTransition(record.status, change.status)) {
    throw new TaskError(
      'TASK_TERMINAL',
      isTerminal(record.status)
        ? `Task ${record.taskId} is already ${record.status}; it cannot become ${change.status}`
        : `Task ${record.taskId} cannot go from ${record.status} to ${change.status}`,
    );
  }
  if ((change.status === 'completed' || change.status === 'failed') && !change.outcome) {
    throw new TaskError('TASK_TERMINAL', `Task ${record.taskId} cannot become ${change.status} without an outcome`);
  }
  const { statusMessage: _previous, inputRequests: _requests, ...rest } = record;
  const message = change.statusMessage === undefined ? record.statusMessage : (change.statusMessage ?? undefined);
  // Every status write passes here, so no runtime stores a message longer than the bound.
  const statusMessage = message === undefined ? undefined : truncateStatusMessage(message);
  // A task that ended has nobody left to ask: its questions are withdrawn.
  const inputRequests = isTerminal(change.status) ? undefined : (change.inputRequests ?? record.inputRequests);
  return {
    ...rest,
    status: change.status,
    ...(statusMessage !== undefined && { statusMessage }),
    ...(change.outcome && { outcome: change.outcome }),
    ...(inputRequests && Object.keys(inputRequests).length > 0 && { inputRequests }),
    ...(change.inputAnswers && { inputAnswers: change.inputAnswers }),
    ...(change.steps && { steps: change.steps }),
    ...(change.sleeps && { sleeps: change.sleeps }),
    ...(change.callbacks && { callbacks: change.callbacks }),
    ...(change.progress && { progress: change.progress }),
    ...(change.toolVersion !== undefined && { toolVersion: change.toolVersion }),
    ...(change.children && { children: change.children }),
    ...(isTerminal(change.status) && record.keepAliveMs !== undefined && { ttlMs: keptAlive(record, now) }),
    // Clocks never run backwards even if the wall clock does.
    lastUpdatedAt: Math.max(now, record.lastUpdatedAt),
    revision: (record.revision ?? 0) + 1,
  };
}

/** Retention of a SEP-1686 task that ends now: `keepAlive` from here, never past its original cap. */
function keptAlive(record: TaskRecord, now: number): number {
  const untilNow = Math.max(0, now - record.createdAt);
  const wanted = untilNow + (record.keepAliveMs ?? 0);
  return Math.max(1, record.ttlMs === null ? wanted : Math.min(record.ttlMs, wanted));
}

/** The terminal change for an outcome: an error fails the task, any result completes it. */
export function outcomeChange(outcome: TaskOutcome): TaskChange {
  if (outcome.kind === 'error') {
    return { status: 'failed', statusMessage: outcome.error.message, outcome };
  }
  return { status: 'completed', statusMessage: outcome.isError ? toolErrorMessage(outcome.result) : null, outcome };
}

function toolErrorMessage(result: Readonly<Record<string, unknown>>): string {
  const content = result.content;
  if (Array.isArray(content)) {
    const text = content.find((block) => block && typeof block === 'object' && block.type === 'text');
    if (text && typeof text.text === 'string') return text.text;
  }
  return 'The tool reported an error';
}
