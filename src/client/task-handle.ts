/**
 * One task, whichever dialect carries it: its status, a stream of events, answers, cancel and
 * the result. The handle polls `tasks/get` at the server's `pollIntervalMs`, and wakes early on
 * a status notification (2025-11-25 `notifications/tasks/status`, 2026-07-28
 * `notifications/tasks` on a listen stream). On 2025-11-25 it also holds the blocking
 * `tasks/result` open: that is where the result and the task's questions arrive.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { isTaskNotFound, JsonRpcResponseError, TaskClientError, TaskClientErrorCode } from './errors.js';
import { EventQueue } from './event-queue.js';
import { QUESTION_KEY_META_KEY, questionFrom, type TaskOutcome, type TaskWire, toElicitResult } from './task-wire.js';
import {
  type QuestionAnswer,
  type TaskEvent,
  type TaskQuestion,
  type TaskSnapshot,
  TERMINAL_STATUSES,
} from './types.js';

/** What a handle needs from its client. */
export interface TaskHandleHost {
  readonly wire: TaskWire;
  /** Poll interval when the server suggests none (ms). */
  readonly defaultPollIntervalMs: number;
  /** Asks the server to push this task's status where it can (2026 listen streams); returns the closer. */
  subscribe?(taskId: string): (() => void) | undefined;
  /** Resolves once the answers handed to the SDK client have gone out (2025-11-25). */
  delivered(): Promise<void>;
}

interface OpenQuestion {
  readonly question: TaskQuestion;
  readonly respond: (result: Record<string, unknown>) => void;
}

/**
 * One task as the client follows it, whichever revision carries it: its last known status
 * (`latest`), a fresh one (`status()`), an event stream, answers to its questions, cancel and the
 * result. `TaskClient.task(id)` makes one for a task created earlier, after a restart say.
 */
export class TaskHandle {
  private snapshot: TaskSnapshot | undefined;
  private outcome: TaskOutcome | undefined;
  private readonly subscribers = new Set<EventQueue<TaskEvent>>();
  private watching: Promise<void> | undefined;
  private pump: Promise<void> | undefined;
  private wake: () => void = () => {};
  private failure: unknown;
  /** 2025-11-25 questions received on `tasks/result`, waiting for `answer`. */
  private readonly open2025 = new Map<string, OpenQuestion>();
  private asked2025 = 0;
  private readonly seenQuestions = new Set<string>();

  constructor(
    private readonly host: TaskHandleHost,
    readonly taskId: string,
    initial?: TaskSnapshot,
  ) {
    if (initial) this.snapshot = initial;
  }

  get dialect() {
    return this.host.wire.dialect;
  }

  /** The last status this client saw, without asking the server. */
  get latest(): TaskSnapshot | undefined {
    return this.snapshot && this.withOpenQuestions(this.snapshot);
  }

  /** Asks the server for the task's status now. Rejects with code -32602 when it is unknown or expired. */
  async status(): Promise<TaskSnapshot> {
    const { task, outcome } = await this.host.wire.get(this.taskId);
    this.absorb(task, outcome);
    return this.withOpenQuestions(task);
  }

  /**
   * Status changes, progress and questions until the task ends (the last event is the
   * terminal status). Each `for await` gets its own stream, starting with the current status.
   */
  get events(): AsyncIterable<TaskEvent> {
    return {
      [Symbol.asyncIterator]: () => {
        const queue: EventQueue<TaskEvent> = new EventQueue(() => this.subscribers.delete(queue));
        this.subscribers.add(queue);
        if (this.snapshot) {
          queue.push({ type: 'status', task: this.withOpenQuestions(this.snapshot) });
          for (const question of this.withOpenQuestions(this.snapshot).questions)
            queue.push({ type: 'question', question });
          if (TERMINAL_STATUSES.has(this.snapshot.status)) queue.end();
        }
        if (this.failure !== undefined) queue.end(this.failure);
        this.watch();
        return queue;
      },
    };
  }

  /** Answers one open question with the form's content. */
  answer(key: string, content: Record<string, unknown>): Promise<void> {
    return this.respond(key, { action: 'accept', content });
  }

  /** Declines (or cancels) one open question. */
  decline(key: string, action: 'decline' | 'cancel' = 'decline'): Promise<void> {
    return this.respond(key, { action });
  }

  /** Answers one open question. */
  async respond(key: string, answer: QuestionAnswer): Promise<void> {
    const { wire } = this.host;
    if (wire.answer) {
      await wire.answer(this.taskId, { [key]: answer });
      this.wake();
      return;
    }
    const open = this.open2025.get(key) ?? (await this.awaitQuestion2025(key));
    this.open2025.delete(key);
    open.respond(toElicitResult(answer));
    await this.host.delivered();
    this.wake();
  }

  /** Asks the server to cancel the task, then reads its status. */
  async cancel(): Promise<TaskSnapshot> {
    await this.host.wire.cancel(this.taskId);
    for (const open of this.open2025.values()) open.respond({ action: 'cancel' });
    this.open2025.clear();
    this.wake();
    return this.status().catch((error: unknown) => {
      if (this.snapshot && isTaskNotFound(error)) return { ...this.snapshot, status: 'cancelled' as const };
      throw error;
    });
  }

  /**
   * The tool's result once the task ends: the `CallToolResult` (a tool error is a result with
   * `isError: true`, in both dialects). Rejects with the task's JSON-RPC error when it failed
   * with one, and with code `task_cancelled` when it was cancelled.
   */
  async result(): Promise<CallToolResult> {
    this.watch();
    await this.watching;
    if (this.failure !== undefined) throw this.failure;
    return this.finish();
  }

  /** Called by the client for every `elicitation/create` that names this task (2025-11-25). */
  receiveQuestion(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const named = meta[QUESTION_KEY_META_KEY];
    const key = typeof named === 'string' ? named : `question-${++this.asked2025}`;
    return new Promise((respond) => {
      this.open2025.set(key, { question: questionFrom(key, params), respond });
      if (this.snapshot) this.emitChanges(this.snapshot, { ...this.snapshot, status: 'input_required' });
      this.wakeQuestionWaiters();
    });
  }

  /** Called by the client when the server pushes this task's status. */
  notified(update: { task: TaskSnapshot; outcome?: TaskOutcome }): void {
    this.absorb(update.task, update.outcome);
    this.wake();
  }

  /** Called by the client for progress reported on the call's progress token. */
  progressed(progress: number, total?: number, message?: string): void {
    this.broadcast({
      type: 'progress',
      progress,
      ...(total !== undefined && { total }),
      ...(message !== undefined && { message }),
    });
  }

  private questionWaiters: (() => void)[] = [];

  private wakeQuestionWaiters(): void {
    const waiters = this.questionWaiters;
    this.questionWaiters = [];
    for (const wake of waiters) wake();
  }

  /** 2025-11-25: the question arrives on `tasks/result`; start reading it and wait for the key. */
  private async awaitQuestion2025(key: string): Promise<OpenQuestion> {
    this.watch();
    for (;;) {
      const open = this.open2025.get(key);
      if (open) return open;
      if (this.outcome || this.failure !== undefined || (this.snapshot && TERMINAL_STATUSES.has(this.snapshot.status)))
        throw new TaskClientError(
          TaskClientErrorCode.NoSuchQuestion,
          `Task ${this.taskId} has no open question '${key}'`,
        );
      const snapshot = await this.status();
      if (snapshot.status !== 'input_required' && !this.open2025.has(key)) {
        throw new TaskClientError(
          TaskClientErrorCode.NoSuchQuestion,
          `Task ${this.taskId} has no open question '${key}' (it is ${snapshot.status})`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollInterval());
        this.questionWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private finish(): CallToolResult {
    const outcome = this.outcome;
    if (outcome?.kind === 'result') return outcome.result;
    if (outcome?.kind === 'error') throw new JsonRpcResponseError(outcome.code, outcome.message, outcome.data);
    throw new TaskClientError(TaskClientErrorCode.Cancelled, `Task ${this.taskId} was cancelled`, {
      taskId: this.taskId,
      statusMessage: this.snapshot?.statusMessage,
    });
  }

  /** Starts the watch loop once; it ends when the task is terminal and its outcome known. */
  private watch(): void {
    this.watching ??= this.loop().catch((error: unknown) => {
      this.failure = error;
      for (const queue of this.subscribers) queue.end(error);
    });
  }

  private async loop(): Promise<void> {
    const { wire } = this.host;
    const unsubscribe = this.host.subscribe?.(this.taskId);
    try {
      await this.follow(wire);
    } finally {
      unsubscribe?.();
    }
  }

  private async follow(wire: TaskWire): Promise<void> {
    if (wire.result) this.pump = this.pumpResult(wire.result.bind(wire));
    for (;;) {
      const snapshot = await this.status();
      if (TERMINAL_STATUSES.has(snapshot.status) && (this.outcome || snapshot.status === 'cancelled' || !this.pump))
        break;
      if (TERMINAL_STATUSES.has(snapshot.status) && this.pump) {
        await this.pump;
        break;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollInterval());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.wake = () => {};
    for (const queue of this.subscribers) queue.end();
  }

  /** 2025-11-25: one blocking `tasks/result`; it answers when the task ends. */
  private async pumpResult(read: (taskId: string) => Promise<CallToolResult>): Promise<void> {
    try {
      this.outcome = { kind: 'result', result: await read(this.taskId) };
    } catch (error) {
      if (error instanceof JsonRpcResponseError) {
        // A cancelled task has no result; servers answer that with an error of their choosing.
        const snapshot = await this.status().catch(() => this.snapshot);
        if (snapshot?.status !== 'cancelled')
          this.outcome = { kind: 'error', code: error.code as number, message: error.message, data: error.data };
      } else throw error;
    }
    this.wake();
  }

  private pollInterval(): number {
    return Math.max(20, this.snapshot?.pollIntervalMs ?? this.host.defaultPollIntervalMs);
  }

  private absorb(task: TaskSnapshot, outcome?: TaskOutcome): void {
    if (outcome) this.outcome ??= outcome;
    const previous = this.snapshot;
    // Pushes and polls cross on the wire: never step back to an older state.
    if (
      previous &&
      ((TERMINAL_STATUSES.has(previous.status) && !TERMINAL_STATUSES.has(task.status)) ||
        task.lastUpdatedAt < previous.lastUpdatedAt)
    )
      return;
    this.snapshot = task;
    for (const key of this.open2025.keys()) if (TERMINAL_STATUSES.has(task.status)) this.open2025.delete(key);
    this.emitChanges(previous, task);
  }

  private emitChanges(previous: TaskSnapshot | undefined, next: TaskSnapshot): void {
    const before = previous && this.withOpenQuestions(previous);
    const after = this.withOpenQuestions(next);
    if (
      !before ||
      before.status !== after.status ||
      before.statusMessage !== after.statusMessage ||
      keysOf(before) !== keysOf(after)
    )
      this.broadcast({ type: 'status', task: after });
    for (const question of after.questions) {
      if (this.seenQuestions.has(question.key)) continue;
      this.seenQuestions.add(question.key);
      this.broadcast({ type: 'question', question });
    }
    // A key answered and asked again (an answer the task refused) is a new question.
    for (const key of this.seenQuestions)
      if (!after.questions.some((q) => q.key === key)) this.seenQuestions.delete(key);
  }

  private withOpenQuestions(task: TaskSnapshot): TaskSnapshot {
    if (this.open2025.size === 0) return task;
    return {
      ...task,
      ...(!TERMINAL_STATUSES.has(task.status) && { status: 'input_required' as const }),
      questions: [...task.questions, ...[...this.open2025.values()].map((open) => open.question)],
    };
  }

  private broadcast(event: TaskEvent): void {
    for (const queue of this.subscribers) queue.push(event);
  }
}

function keysOf(task: TaskSnapshot): string {
  return task.questions.map((q) => q.key).join('\n');
}
