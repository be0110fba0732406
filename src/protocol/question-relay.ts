/**
 * Questions asked on a client's open request: while it waits for the task to end, each new
 * question goes to the client as `elicitation/create` on that request's stream, and the answer
 * goes back to the task. Core tasks of 2025-11-25 do this on `tasks/result` (docs/traceability.md, B-27 to B-30); the SEP-1686
 * shim on the original `tools/call`. Other channels of a 2025-11-25 session (its standalone
 * stream, companion waits) ask through the same functions and share the session's ledger.
 */
import type { Caller } from '../engine/engine.js';
import type { AnswerOutcome } from '../engine/inputs.js';
import { expiresAt, isTerminal, type PendingInput, type TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { isPlainObject } from './params.js';
import { type QuestionClaim, QuestionLedger } from './question-ledger.js';
import type { ToolCalls } from './tool-calls.js';

/**
 * The `_meta` key naming which question an `elicitation/create` asks. The 2025-11-25 wire has
 * no field for it; our client (`mcp-task-server/client`) reads it so that answers by key work
 * in both dialects. Other clients ignore it.
 */
export const QUESTION_KEY_META_KEY = 'mcp-task-server/question-key';

/**
 * Sends `elicitation/create` to the client and resolves with its `ElicitResult`. `signal`
 * abandons the request (the client is told it was cancelled), and the promise rejects.
 */
export type Elicit = (params: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal) => Promise<unknown>;

/** A person answers an inline question; the call waits that long at most. */
export const INLINE_QUESTION_TIMEOUT_MS = 10 * 60 * 1000;

/** The longest a timer can wait (2^31 - 1 ms); a task without a TTL asks this long at most. */
const LONGEST_TIMER_MS = 2_147_483_647;

export interface RelayOptions {
  /**
   * The session's ledger of questions out with its client. With it, a question another channel
   * of the same session has out (the standalone stream, a companion wait, another
   * `tasks/result`) is not asked here, and one it releases is asked here if still open.
   * Without it, each call keeps a ledger of its own: every question is asked once per call.
   */
  readonly ledger?: QuestionLedger;
  /**
   * When the wait's own time is up (a grace time, `task_wait.seconds`). Unlike `signal` (the
   * client hung up), it withdraws no dialog a person has open: with a question out, the wait
   * goes on until that answer is in the task, then ends, but `answerWithinMs` after the
   * deadline at most. No new question is asked after the deadline.
   */
  readonly deadline?: { readonly signal: AbortSignal; readonly answerWithinMs: number };
}

/**
 * Waits for the task to end, sending each new question on the way. A question is sent once
 * per ledger (the session's, or this call's own); an answer the task refused (invalid) makes it
 * askable again, and it is asked again. An answer the engine ignores (the question was answered
 * on another channel, or withdrawn) settles it. If the client fails to answer, this fails with
 * that reason and releases the question; the task keeps waiting, and a new request asks again.
 * When the wait ends (the task ended, or the client left), the questions it still has out are
 * withdrawn and released.
 */
export async function relayQuestionsUntilDone(
  calls: ToolCalls,
  caller: Caller,
  taskId: string,
  signal: AbortSignal,
  elicit: Elicit,
  options: RelayOptions = {},
): Promise<TaskRecord> {
  const ledger = options.ledger ?? new QuestionLedger();
  const broken = new AbortController();
  // The questions this wait has out end with it: a client that left this request cannot answer
  // them here, so they are withdrawn and become askable on the session's other channels.
  const asking = new AbortController();
  const elicitHere: Elicit = (params, timeoutMs) => elicit(params, timeoutMs, asking.signal);
  // Wakes the wait below when a refused or unanswered question becomes askable again.
  let nudge = () => {};
  const stopListening = ledger.onReleased((released) => {
    if (released === taskId) nudge();
  });
  const askable = (record: TaskRecord) =>
    Object.keys(record.inputRequests ?? {}).filter((key) => ledger.isAskable(taskId, key));
  // The deadline ends the wait once no question of this wait is out (or `answerWithinMs` later).
  const timeUp = new AbortController();
  let out = 0;
  let overtime: NodeJS.Timeout | undefined;
  const deadline = options.deadline;
  const endIfIdle = () => {
    if (deadline?.signal.aborted && out === 0) timeUp.abort(deadline.signal.reason);
  };
  const onDeadline = () => {
    endIfIdle();
    if (!timeUp.signal.aborted && deadline) {
      overtime = setTimeout(() => timeUp.abort(deadline.signal.reason), deadline.answerWithinMs);
    }
  };
  if (deadline?.signal.aborted) onDeadline();
  else deadline?.signal.addEventListener('abort', onDeadline, { once: true });
  const ended = AbortSignal.any([signal, timeUp.signal]);
  try {
    for (;;) {
      const round = new AbortController();
      nudge = () => round.abort();
      let record: TaskRecord;
      try {
        record = await calls.engine.waitFor(
          caller,
          taskId,
          (current) => isTerminal(current.status) || askable(current).length > 0,
          AbortSignal.any([ended, broken.signal, round.signal]),
        );
      } catch (error) {
        if (ended.aborted) throw error;
        if (broken.signal.aborted) throw broken.signal.reason;
        if (round.signal.aborted) continue;
        throw error;
      }
      if (isTerminal(record.status)) {
        ledger.forget(taskId);
        return record;
      }
      // After the deadline the wait only sees its open dialogs through; it starts none.
      if (deadline?.signal.aborted) {
        await new Promise<void>((resolve) => {
          nudge = resolve;
          if (ended.aborted || broken.signal.aborted) resolve();
          ended.addEventListener('abort', () => resolve(), { once: true });
          broken.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (ended.aborted) throw ended.reason;
        if (broken.signal.aborted) throw broken.signal.reason;
        continue;
      }
      for (const key of askable(record)) {
        const claim = ledger.claim(taskId, key);
        if (!claim) continue;
        const pending = record.inputRequests?.[key] as PendingInput;
        const onUnanswered = (error: unknown) =>
          broken.abort(
            new JsonRpcError(
              JsonRpcErrorCode.InternalError,
              `The client did not answer the task's question '${key}': ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
        out++;
        askOnce(
          calls,
          caller,
          { taskId, key, pending },
          { elicit: elicitHere, timeoutMs: questionTimeoutMs(record), onUnanswered },
          claim,
        )
          .catch(() => {
            // `onUnanswered` has ended this wait with the reason.
          })
          .finally(() => {
            out--;
            endIfIdle();
          });
      }
    }
  } finally {
    stopListening();
    clearTimeout(overtime);
    deadline?.signal.removeEventListener('abort', onDeadline);
    asking.abort(new Error('the wait for the task ended'));
  }
}

/**
 * Sends one claimed question and hands the client's answer to the task. Settles the claim when
 * the answer was taken or ignored; releases it when the answer was refused (so it is asked
 * again). When the client did not answer, or its answer could not be delivered, this calls
 * `onUnanswered` first (so the channel can stop asking before the release wakes it), releases
 * the claim, and rejects with that reason.
 */
export async function askOnce(
  calls: ToolCalls,
  caller: Caller,
  question: { readonly taskId: string; readonly key: string; readonly pending: PendingInput },
  send: { readonly elicit: Elicit; readonly timeoutMs: number; readonly onUnanswered?: (error: unknown) => void },
  claim: QuestionClaim,
): Promise<void> {
  const { taskId, key, pending } = question;
  const meta = isPlainObject(pending.params._meta) ? pending.params._meta : {};
  let outcome: AnswerOutcome;
  try {
    const response = await send.elicit(
      { ...pending.params, _meta: { ...meta, [QUESTION_KEY_META_KEY]: key } },
      send.timeoutMs,
    );
    outcome = await calls.answer(caller, taskId, { [key]: response });
  } catch (error) {
    send.onUnanswered?.(error);
    claim.release();
    throw error;
  }
  if (outcome.rejected[key] !== undefined) claim.release();
  else claim.settle();
}

/** How long a person may take over a question: until the task expires, within what a timer can wait. */
export function questionTimeoutMs(record: TaskRecord): number {
  return Math.min(LONGEST_TIMER_MS, Math.max(1000, expiresAt(record) - Date.now()));
}
