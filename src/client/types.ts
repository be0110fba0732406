/**
 * What a task client sees of a task, the same for both dialects: 2025-11-25 core tasks and the
 * 2026-07-28 tasks extension are read into these shapes and never leak their field names.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';

export type { CallToolResult };

/** The two task revisions a client can speak: 2025-11-25 core tasks, or the 2026-07-28 tasks extension. */
export type Dialect = '2025-11-25' | '2026-07-28';

/** How `connectTaskClient` picks a dialect: negotiate (default), or force one. */
export type DialectChoice = 'auto' | '2025' | '2026';

/**
 * A task's status in either revision. `completed`, `failed` and `cancelled` are terminal: a task
 * never leaves them.
 */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** One question a task asks its caller (an elicitation form). */
export interface TaskQuestion {
  /**
   * The question's key: the `inputRequests` key (2026-07-28), or the key our server puts in
   * the elicitation's `_meta` (2025-11-25); for other 2025 servers, `question-<n>`.
   */
  readonly key: string;
  readonly message: string;
  /** The JSON Schema of the answer (a flat object of primitives). */
  readonly requestedSchema: Record<string, unknown>;
}

/** A task as the server last reported it. */
export interface TaskSnapshot {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** Retention from creation in ms; `null` is unlimited. */
  readonly ttlMs: number | null;
  /** How often the server suggests polling, in ms. */
  readonly pollIntervalMs?: number;
  /** Open questions this client knows of. */
  readonly questions: readonly TaskQuestion[];
}

/** What `events` yields while a task runs; it ends after the terminal `status` event. */
export type TaskEvent =
  | { readonly type: 'status'; readonly task: TaskSnapshot }
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'question'; readonly question: TaskQuestion };

/** An answer: the content of an accepted form, or a refusal. */
export type QuestionAnswer =
  | { readonly action: 'accept'; readonly content: Record<string, unknown> }
  | { readonly action: 'decline' | 'cancel' };

/** Summary of one tool from `tools/list`. */
export interface ToolSummary {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  /** 2025-11-25 only: `execution.taskSupport` (2026-07-28 servers decide per call). */
  readonly taskSupport?: 'forbidden' | 'optional' | 'required';
}
