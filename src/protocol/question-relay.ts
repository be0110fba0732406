/**
 * Questions asked on a client's open request: while it waits for the task to end, each new
 * question goes to the client as `elicitation/create` on that request's stream, and the answer
 * goes back to the task. Core tasks of 2025-11-25 do this on `tasks/result` (docs/traceability.md, B-27 to B-30); the SEP-1686
 * shim on the original `tools/call`.
 */
import type { Caller } from '../engine/engine.js';
import { expiresAt, isTerminal, type PendingInput, type TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { isPlainObject } from './params.js';
import type { ToolCalls } from './tool-calls.js';

/**
 * The `_meta` key naming which question an `elicitation/create` asks. The 2025-11-25 wire has
 * no field for it; our client (`mcp-task-server/client`) reads it so that answers by key work
 * in both dialects. Other clients ignore it.
 */
export const QUESTION_KEY_META_KEY = 'mcp-task-server/question-key';

/** Sends `elicitation/create` to the client and resolves with its `ElicitResult`. */
export type Elicit = (params: Record<string, unknown>, timeoutMs: number) => Promise<unknown>;

/**
 * Waits for the task to end, sending each new question on the way. A question is sent once
 * per request; an answer the task refused (invalid) makes it outstanding again, and it is
 * asked again. If the client fails to answer, this fails with that reason; the task keeps
 * waiting, and a new request asks again.
 */
export async function relayQuestionsUntilDone(
  calls: ToolCalls,
  caller: Caller,
  taskId: string,
  signal: AbortSignal,
  elicit: Elicit,
): Promise<TaskRecord> {
  const sent = new Set<string>();
  const broken = new AbortController();
  // Wakes the wait below when a refused answer makes a sent question askable again.
  let nudge = () => {};
  const unsent = (record: TaskRecord) => Object.keys(record.inputRequests ?? {}).filter((key) => !sent.has(key));
  for (;;) {
    const round = new AbortController();
    nudge = () => round.abort();
    let record: TaskRecord;
    try {
      record = await calls.engine.waitFor(
        caller,
        taskId,
        (current) => isTerminal(current.status) || unsent(current).length > 0,
        AbortSignal.any([signal, broken.signal, round.signal]),
      );
    } catch (error) {
      if (signal.aborted) throw error;
      if (broken.signal.aborted) throw broken.signal.reason;
      if (round.signal.aborted) continue;
      throw error;
    }
    if (isTerminal(record.status)) return record;
    for (const key of unsent(record)) {
      sent.add(key);
      const pending = record.inputRequests?.[key] as PendingInput;
      const timeoutMs = Math.max(1000, expiresAt(record) - Date.now());
      const meta = isPlainObject(pending.params._meta) ? pending.params._meta : {};
      elicit({ ...pending.params, _meta: { ...meta, [QUESTION_KEY_META_KEY]: key } }, timeoutMs)
        .then((response) => calls.answer(caller, taskId, { [key]: response }))
        .then(
          (outcome) => {
            if (!outcome.rejected[key]) return;
            sent.delete(key);
            nudge();
          },
          (error: unknown) => {
            sent.delete(key);
            broken.abort(
              new JsonRpcError(
                JsonRpcErrorCode.InternalError,
                `The client did not answer the task's question '${key}': ${error instanceof Error ? error.message : String(error)}`,
              ),
            );
          },
        );
    }
  }
}
