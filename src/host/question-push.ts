/**
 * 2025-11-25: the questions of a session's tasks, sent to its client on the session's
 * standalone stream (the GET SSE stream over HTTP while one is open, stdout over stdio) as
 * `elicitation/create` requests that carry the related-task `_meta`. A client that only polls
 * `tasks/get` (and calls `tasks/result` only once the task has ended) would otherwise never see
 * a question, and its task would wait for an answer until it expired.
 *
 * Only tasks created on this session are followed, read as the caller that created them, and
 * only when the client declared form elicitation: a server must not send a request for a
 * capability the client did not declare. Each question goes through the session's ledger, so
 * one a `tasks/result` stream or a companion wait has out is not pushed too, and one they
 * release is pushed if the stream is open. A question whose push got no answer (an error, no
 * answer within `PUSH_ANSWER_TIMEOUT_MS`) is pushed again only on a newer stream: a client that
 * fails a request is not asked the same thing in a loop. A push whose question closed meanwhile
 * (answered elsewhere, or the task ended) is withdrawn: the client is told it was cancelled.
 */
import type { ClientCapabilities, Server } from '@modelcontextprotocol/server';
import type { Caller, TaskEngine } from '../engine/engine.js';
import { TaskFollower } from '../engine/follow.js';
import { isTerminal, type PendingInput, type TaskRecord } from '../engine/task.js';
import type { QuestionLedger } from '../protocol/question-ledger.js';
import { askOnce, type Elicit, questionTimeoutMs } from '../protocol/question-relay.js';
import { withRelatedTask } from '../protocol/tasks-2025.js';
import type { ToolCalls } from '../protocol/tool-calls.js';

/**
 * How long a pushed question waits for its answer before it counts as unanswered (and is
 * pushed again once the client opens a new stream). A person at a dialog answers well within it.
 */
export const PUSH_ANSWER_TIMEOUT_MS = 10 * 60 * 1000;

export interface QuestionPush {
  /** Follows a task created on this session, as the caller that created it. */
  track(taskId: string, caller: Caller): void;
  /** The session's standalone stream opened (`true`) or closed (`false`). */
  standaloneStream(open: boolean): void;
  detach(): void;
}

export interface QuestionPushOptions {
  readonly engine: TaskEngine;
  readonly calls: ToolCalls;
  /** The session's ledger, shared with every other channel that asks its questions. */
  readonly ledger: QuestionLedger;
  /** Whether the standalone stream is open from the start (stdio: always). */
  readonly streamOpen?: boolean;
}

export function attachQuestionPush(server: Server, options: QuestionPushOptions): QuestionPush {
  const { calls, ledger } = options;
  /** Counts the standalone streams opened; a failed push is retried only on a newer one. */
  let stream = options.streamOpen ? 1 : 0;
  let streamOpen = options.streamOpen ?? false;
  let detached = false;
  /** The latest version of each followed task that has questions out, and who may read it. */
  const waiting = new Map<string, { record: TaskRecord; caller: Caller }>();
  /** `taskId\0key` → the stream on which its push went unanswered. */
  const failedOn = new Map<string, number>();
  /** `taskId\0key` → what withdraws its push while it is out. */
  const out = new Map<string, AbortController>();
  const failureKey = (taskId: string, key: string) => `${taskId}\0${key}`;
  const ofTask = (taskId: string, keys: Iterable<string>) => [...keys].filter((key) => key.startsWith(`${taskId}\0`));
  /**
   * Withdraws the pushes of `taskId` whose question is no longer open (answered on another
   * channel, or the task ended): the client is told the request was cancelled, so its dialog
   * can close.
   */
  const withdraw = (taskId: string, open: Readonly<Record<string, unknown>>) => {
    for (const failure of ofTask(taskId, out.keys())) {
      if (failure.slice(taskId.length + 1) in open) continue;
      out.get(failure)?.abort(new Error('the question is no longer open'));
      out.delete(failure);
    }
  };

  const canPush = () =>
    !detached && streamOpen && server.transport !== undefined && acceptsFormElicitation(server.getClientCapabilities());
  const push = (taskId: string) => {
    const entry = waiting.get(taskId);
    if (!entry || !canPush()) return;
    const { record, caller } = entry;
    for (const [key, pending] of Object.entries(record.inputRequests ?? {}) as [string, PendingInput][]) {
      const failure = failureKey(taskId, key);
      if ((failedOn.get(failure) ?? 0) >= stream) continue;
      const claim = ledger.claim(taskId, key);
      if (!claim) continue;
      const sentOn = stream;
      const withdrawal = new AbortController();
      out.set(failure, withdrawal);
      // No related request: the transport sends it on the standalone stream.
      const elicit: Elicit = (params, timeoutMs) =>
        server.request(
          { method: 'elicitation/create', params: withRelatedTask(params, taskId) },
          { timeout: timeoutMs, signal: withdrawal.signal },
        );
      askOnce(
        calls,
        caller,
        { taskId, key, pending },
        {
          elicit,
          timeoutMs: Math.min(PUSH_ANSWER_TIMEOUT_MS, questionTimeoutMs(record)),
          // Noted before the claim is released, so the release does not push it again at once.
          // A withdrawn question was not failed by the client.
          onUnanswered: () => {
            if (!withdrawal.signal.aborted) failedOn.set(failure, sentOn);
          },
        },
        claim,
      )
        .catch(() => {
          // Released: asked again by another channel, or here on a newer stream.
        })
        .finally(() => {
          if (out.get(failure) === withdrawal) out.delete(failure);
        });
    }
  };
  const stopListening = ledger.onReleased(push);

  const forget = (taskId: string) => {
    waiting.delete(taskId);
    ledger.forget(taskId);
    withdraw(taskId, {});
    for (const failure of ofTask(taskId, failedOn.keys())) failedOn.delete(failure);
  };
  const followers = new Map<string | null, TaskFollower>();
  const followerFor = (caller: Caller): TaskFollower => {
    let follower = followers.get(caller.principal);
    if (!follower) {
      follower = new TaskFollower(options.engine, caller, {
        onChange: (record) => {
          if (isTerminal(record.status)) {
            forget(record.taskId);
            follower?.drop(record.taskId);
            return;
          }
          withdraw(record.taskId, record.inputRequests ?? {});
          if (Object.keys(record.inputRequests ?? {}).length === 0) {
            waiting.delete(record.taskId);
            return;
          }
          waiting.set(record.taskId, { record, caller });
          push(record.taskId);
        },
        onGone: (taskId) => forget(taskId),
      });
      followers.set(caller.principal, follower);
    }
    return follower;
  };

  return {
    track: (taskId, caller) => {
      if (!detached) void followerFor(caller).follow(taskId);
    },
    standaloneStream: (open) => {
      if (open === streamOpen) return;
      streamOpen = open;
      if (!open) return;
      stream++;
      for (const taskId of [...waiting.keys()]) push(taskId);
    },
    detach: () => {
      detached = true;
      stopListening();
      for (const withdrawal of out.values()) withdrawal.abort(new Error('the session closed'));
      out.clear();
      for (const follower of followers.values()) follower.close();
      followers.clear();
      waiting.clear();
      failedOn.clear();
    },
  };
}

/**
 * Whether the client can answer a form: 2025-11-25 reads a bare `elicitation: {}` as form
 * support (from before modes existed), and `elicitation.form` says so explicitly.
 */
export function acceptsFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  if (!elicitation || typeof elicitation !== 'object') return false;
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}
