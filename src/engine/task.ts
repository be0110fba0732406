/**
 * The task record: one shape for every dialect. Wire projections (2025's `ttl`, 2026's `ttlMs`,
 * SEP-1686's `keepAlive`) are computed from it in `src/protocol/`, never stored.
 */

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** A JSON-RPC error as the original request would have returned it. */
export interface TaskErrorPayload {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * How the work ended. A tool result with `isError: true` is still a `result`: 2025-11-25 reports
 * it as `failed`, C and A as `completed`, so the record keeps the fact, not the verdict.
 */
export type TaskOutcome =
  | { readonly kind: 'result'; readonly result: Readonly<Record<string, unknown>>; readonly isError: boolean }
  | { readonly kind: 'error'; readonly error: TaskErrorPayload };

/**
 * A question the running method asked (an MCP `elicitation/create` form). `params` is the
 * request's params exactly as clients receive them; the engine never looks inside.
 */
export interface PendingInput {
  /** The `@NeedsInput` name the key was derived from. */
  readonly question: string;
  readonly params: Readonly<Record<string, unknown>>;
}

export interface TaskProgressValue {
  readonly progress: number;
  readonly total?: number;
}

/** An answer as the client gave it: an MCP `ElicitResult`. */
export interface InputAnswer {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Readonly<Record<string, unknown>>;
}

export interface TaskRecord {
  /** At least 128 random bits: without an auth principal the id is the only capability. */
  readonly taskId: string;
  /** The principal that owns the task; `null` when nothing identified the caller. */
  readonly owner: string | null;
  readonly tool: string;
  /** The arguments as the client sent them (JSON), validated before the task was created. */
  readonly args: unknown;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /**
   * Writes since creation (0 when created; every `applyChange` adds one): orders two versions
   * of a task cheaply, even when written in the same millisecond. Absent on records stored
   * before it existed.
   */
  readonly revision?: number;
  /** Retention measured from `createdAt`; `null` keeps the task until the runtime is cleared. */
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
  /** Present once the task is `completed` or `failed`. */
  readonly outcome?: TaskOutcome;
  /** The latest numeric progress the method reported (2025-11-25 clients get it as notifications). */
  readonly progress?: TaskProgressValue;
  /**
   * Questions waiting for an answer, by key. Keys are unique over the task's life: an
   * answered key moves to `inputAnswers` and is never asked again.
   */
  readonly inputRequests?: Readonly<Record<string, PendingInput>>;
  /** Answers already given, replayed to the method when it runs again after a pause. */
  readonly inputAnswers?: Readonly<Record<string, InputAnswer>>;
  /** Results of `ctx.step(name, fn)`, so work done before a pause is not repeated. */
  readonly steps?: Readonly<Record<string, unknown>>;
  /**
   * The wake time (ms since the epoch) of each `ctx.sleep`, by key (`sleep`, `sleep#2`, ...),
   * stored when the sleep is first called: a run replayed after the wake passes a sleep that is
   * over at once, and one replayed early sleeps only the time left.
   */
  readonly sleeps?: Readonly<Record<string, number>>;
  /**
   * The callback hooks `ctx.callback(name)` made, by key (`name`, `name#2`, ... per call, as for
   * questions), so a replayed run gets the same hook back and its wait the same outcome.
   */
  readonly callbacks?: Readonly<Record<string, CallbackState>>;
  /**
   * Set for tasks created through the SEP-1686 shim: how long to keep the task once it ended
   * (its `keepAlive`). At that moment `ttlMs` shrinks to the time elapsed plus this, within the
   * cap it was created with. Its presence also marks the task as speaking that dialect.
   */
  readonly keepAliveMs?: number;
  /** The id a SEP-1686 client chose; `taskId` is where it is stored, in the client's namespace. */
  readonly clientTaskId?: string;
  /**
   * Run order among tasks waiting for a worker slot: 0 to `MAX_PRIORITY`, lower first (as in
   * BullMQ); absent means 0. Tasks of the same priority run in creation order.
   */
  readonly priority?: number;
  /**
   * The version of the tool the task runs with (`@Task({ version })`, else a hash of its
   * schemas): the accepting server's at creation, then the version of the worker that first
   * runs it. Once the method has run, it resumes only on a worker with this version.
   */
  readonly toolVersion?: string;
  /**
   * For a task of a caller without a principal whose address the host knew: the opaque budget
   * (a digest of that address) its live-task quota counts against, so anonymous clients do not
   * share one quota. Absent: the owner's quota (anonymous callers without an address together).
   */
  readonly liveBudget?: string;
  /**
   * The child tasks this task started with `ctx.spawn`, by call-site key (`tool`, `tool#2`, ...):
   * a run replayed after a pause or a lost worker finds them here and starts none twice.
   */
  readonly children?: Readonly<Record<string, ChildEntry>>;
  /** Set on a child task: the task that spawned it, and under which key. */
  readonly parent?: ParentLink;
}

/**
 * One callback hook of a task (`ctx.callback`): the secret token its URL carries, how long it
 * waits, and what came of it. `token` never leaves the task's own run (the method gets it in
 * the URL); the runtime's lookup index keys on its SHA-256 digest only.
 */
export interface CallbackState {
  /** The name the method gave `ctx.callback`. */
  readonly name: string;
  /** A public id for logs and the method (`hook.id`); not a capability. */
  readonly id: string;
  /** At least 128 random bits, base64url: whoever holds it may POST the one payload. */
  readonly token: string;
  readonly createdAt: number;
  /** When the wait ends without a payload (ms since the epoch); `null`: at the task's expiry. */
  readonly timeoutAt: number | null;
  readonly status: 'waiting' | 'received' | 'timed_out';
  /** The payload as POSTed (checked against its schema), once `received`. */
  readonly payload?: unknown;
  readonly settledAt?: number;
}

/** What a parent's record keeps of one child. */
export interface ChildEntry {
  readonly taskId: string;
  readonly tool: string;
  /** The child's terminal status, once the runtime saw it end (counts the "n of m done" message). */
  readonly ended?: TaskStatus;
}

/** What a child's record keeps of its parent. */
export interface ParentLink {
  readonly taskId: string;
  /** The call-site key the parent spawned it under. */
  readonly key: string;
}

/** The highest priority number a task may have (the one that runs last). */
export const MAX_PRIORITY = 1000;

/** What a runtime needs to store a new task; the engine fills in ids, clocks and policy. */
export type NewTaskRecord = TaskRecord & { readonly status: 'working' };

export function expiresAt(record: Pick<TaskRecord, 'createdAt' | 'ttlMs'>): number {
  return record.ttlMs === null ? Number.POSITIVE_INFINITY : record.createdAt + record.ttlMs;
}
