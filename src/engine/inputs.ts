/**
 * Questions a running task asks and the answers it gets, as record changes. Both runtimes and
 * both dialects go through these, so "keys are unique over the task's life", "partial answers
 * keep the task waiting" and "stale keys are ignored" hold the same everywhere.
 */
import { type InputAnswer, isTerminal, type PendingInput, type TaskRecord } from './task.js';
import type { TaskChange } from './transitions.js';

/**
 * Registers a question unless it is already outstanding or answered. The task waits for input
 * (`input_required`) as long as any question is outstanding.
 */
export function askChange(record: TaskRecord, key: string, pending: PendingInput): TaskChange | undefined {
  if (isTerminal(record.status) || record.inputAnswers?.[key] || record.inputRequests?.[key]) return undefined;
  const message =
    typeof pending.params.message === 'string' ? pending.params.message : `waiting for ${pending.question}`;
  return {
    status: 'input_required',
    statusMessage: message,
    inputRequests: { ...record.inputRequests, [key]: pending },
  };
}

/** Says why an answer cannot be accepted, or `undefined` when it can. */
export type AnswerCheck = (pending: PendingInput, answer: InputAnswer, record: TaskRecord) => string | undefined;

export interface AnswerOutcome {
  readonly change: TaskChange | undefined;
  /** Keys whose answers were taken. */
  readonly accepted: readonly string[];
  /** Keys whose answers were refused, with the reason. */
  readonly rejected: Readonly<Record<string, string>>;
  /**
   * Keys answered that were not outstanding: never asked, answered already (a second answer to
   * the same question, from any channel), or withdrawn. Their answers change nothing.
   */
  readonly ignored: readonly string[];
}

/**
 * Takes the answers for outstanding keys; ignores keys that are not outstanding (never asked,
 * already answered, or withdrawn), so a question's answer is taken once however many channels
 * answer it, and a later answer neither replaces the first nor fails. An invalid answer leaves its question outstanding and says
 * why in `statusMessage`. When no question is left, the task goes back to `working`.
 */
export function answerChange(
  record: TaskRecord,
  responses: Readonly<Record<string, unknown>>,
  check: AnswerCheck,
): AnswerOutcome {
  const outstanding = { ...record.inputRequests };
  const answers = { ...record.inputAnswers };
  const accepted: string[] = [];
  const rejected: Record<string, string> = {};
  const ignored: string[] = [];
  if (isTerminal(record.status)) return { change: undefined, accepted, rejected, ignored: Object.keys(responses) };
  for (const [key, response] of Object.entries(responses)) {
    const pending = outstanding[key];
    if (!pending) {
      ignored.push(key);
      continue;
    }
    const answer = toAnswer(response);
    const problem = answer
      ? check(pending, answer, record)
      : 'an answer needs "action": "accept", "decline" or "cancel"';
    if (problem || !answer) {
      rejected[key] = problem ?? 'invalid answer';
      continue;
    }
    delete outstanding[key];
    answers[key] = answer;
    accepted.push(key);
  }
  if (accepted.length === 0 && Object.keys(rejected).length === 0) {
    return { change: undefined, accepted, rejected, ignored };
  }
  const stillWaiting = Object.keys(outstanding).length > 0;
  const refusal = Object.entries(rejected)
    .map(([key, reason]) => `the answer to '${key}' was not accepted: ${reason}`)
    .join('; ');
  return {
    accepted,
    rejected,
    ignored,
    change: {
      status: stillWaiting ? 'input_required' : 'working',
      statusMessage: refusal || (stillWaiting ? undefined : null),
      inputRequests: outstanding,
      inputAnswers: answers,
    },
  };
}

/** Whether a question is still waiting for its answer; when none is, a paused task may resume. */
export function hasOutstandingInput(record: TaskRecord): boolean {
  return Object.keys(record.inputRequests ?? {}).length > 0;
}

export function stepChange(record: TaskRecord, name: string, value: unknown): TaskChange | undefined {
  if (isTerminal(record.status) || (record.steps && name in record.steps)) return undefined;
  return { status: record.status, steps: { ...record.steps, [name]: value } };
}

function toAnswer(response: unknown): InputAnswer | undefined {
  if (typeof response !== 'object' || response === null) return undefined;
  const { action, content } = response as { action?: unknown; content?: unknown };
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return undefined;
  if (content !== undefined && (typeof content !== 'object' || content === null || Array.isArray(content))) {
    return undefined;
  }
  return content === undefined ? { action } : { action, content: content as Record<string, unknown> };
}
