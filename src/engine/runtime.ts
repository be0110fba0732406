/**
 * The contract between the engine and a runtime. The memory runtime and the BullMQ runtime
 * both implement it and both pass `test/contract/runtime-contract.ts`.
 *
 * A runtime stores records and runs work; it never decides policy (TTL, owners, ids): the
 * engine hands it complete records.
 */

import type { CallbackRequest, CallbackResult } from './callbacks.js';
import type { ChildEntry } from './children.js';
import type { LifecycleEvent } from './lifecycle.js';
import type { SlotLedger } from './slot-ledger.js';
import type { InputAnswer, NewTaskRecord, PendingInput, TaskOutcome, TaskRecord } from './task.js';
import type { TaskChange } from './transitions.js';

/** Position in an owner's creation-ordered task list. */
export interface ListPosition {
  readonly createdAt: number;
  readonly taskId: string;
}

export interface ListPage {
  readonly records: readonly TaskRecord[];
  /** Where the next page starts; absent on the last page. */
  readonly next?: ListPosition;
}

/** A record changed: status, message or outcome. `previous` is absent for creation. */
export interface TaskEvent {
  readonly record: TaskRecord;
  readonly previous?: TaskRecord;
}

export type TaskListener = (event: TaskEvent) => void;

export interface CreateOptions {
  readonly maxLiveForOwner?: number;
  /**
   * How many of the owner's tasks may run at once, across every worker (the server's fair
   * share). The runtime keeps it with the task, so whichever worker takes it enforces it.
   */
  readonly maxRunningForOwner?: number;
  /** Makes the create idempotent: see `IdempotencyClaim`. */
  readonly idempotency?: IdempotencyClaim;
  /**
   * The task is a child of this one (`ctx.spawn`): a runtime with job dependencies (BullMQ
   * flows) makes the child's job one the parent's job can wait for.
   */
  readonly parentTaskId?: string;
}

/**
 * What a runtime holds for an idempotent create. Atomically with storing the record (across
 * every process sharing the runtime), the runtime either takes `claim` for the new task until
 * `expiresAt`, or, when a task it still has holds the claim, stores nothing, starts nothing and
 * resolves `create` with that task's record (its id differs from the one asked for). The engine
 * decides what a repeat means (same arguments or a conflict); the runtime only keeps the claim.
 */
export interface IdempotencyClaim {
  /** Opaque and safe as a key part (base64url): a digest of principal, tool and key. */
  readonly claim: string;
  /** When the claim lapses (ms since the epoch; `Infinity` for never); at most the task's expiry. */
  readonly expiresAt: number;
}

/**
 * Where tasks are stored and run: the contract the engine drives and both built-in runtimes
 * (`MemoryTaskRuntime`, `BullmqTaskRuntime`) meet. A runtime of your own passes
 * `test/contract/runtime-contract.ts`; it stores and runs, and never decides policy (TTL, owner,
 * ids): the engine hands it complete records.
 */
export interface TaskRuntime {
  /** A short name for logs (`memory`, `bullmq`). */
  readonly kind: string;
  /** Whether tasks survive this process (decides what the start-up log promises). */
  readonly durable: boolean;
  /**
   * Stores the record and schedules its execution. Resolves only once `get` (from any
   * process sharing the runtime) finds the task: the 2026 extension's durable-create rule. Rejects with
   * `TaskError('DUPLICATE_TASK')`, atomically, when a task with that id exists, and with
   * `TaskError('LIMIT_EXCEEDED')`, atomically, when the owner (an anonymous task: its
   * `liveBudget`, else every anonymous caller together) already has `maxLiveForOwner` tasks that
   * have not ended.
   */
  create(record: NewTaskRecord, options?: CreateOptions): Promise<TaskRecord>;
  /**
   * For runtimes that place tasks by id (shards): one of the ids `draw` returns, chosen so that
   * a task stored under it lives where `claim` is kept, which lets one atomic operation take
   * the claim and store the record. Runtimes without placement leave it out.
   */
  idForClaim?(claim: string, draw: () => string): string;
  /** The record, or `undefined` if unknown or past its TTL. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /** One page of `owner`'s tasks in creation order, starting after `after`. */
  list(owner: string, limit: number, after?: ListPosition): Promise<ListPage>;
  /**
   * Moves a non-terminal task to `cancelled` before resolving and signals its work to stop,
   * wherever it runs. Returns the record as it is afterwards (unchanged if already terminal).
   */
  cancel(taskId: string, statusMessage: string): Promise<TaskRecord | undefined>;
  /**
   * Forgets a task at once (the SEP-1686 shim's `tasks/delete`): work still running is stopped
   * as by `cancel`. False when there was no such task.
   */
  remove(taskId: string): Promise<boolean>;
  /**
   * Applies a change computed from the freshest record (answers to the task's questions) and,
   * when no question is left outstanding, resumes work that paused for them. `undefined` when
   * the task is gone.
   */
  answer(taskId: string, decide: (current: TaskRecord) => TaskChange | undefined): Promise<TaskRecord | undefined>;
  /**
   * Every change to every task of this runtime, as soon as the runtime learns of it.
   * `onGap` runs when changes may have been missed (the runtime's event connection dropped
   * and is back); whoever waits for a state re-reads the task then.
   */
  subscribe(listener: TaskListener, onGap?: () => void): () => void;
  close(): Promise<void>;
  /** The queue job that runs the task, on runtimes that have jobs (for logs). */
  jobIdOf?(taskId: string): string | undefined;
  /**
   * On runtimes whose records vanish at their TTL unseen (Redis key expiry publishes nothing),
   * the `expired` lifecycle fact is left to a process that notices: one following the task finds
   * it gone at its expiry (see `FollowerRegistry`). This claims the right to say so: true for
   * exactly one caller per task, across every process sharing the runtime. Runtimes that report
   * expiry themselves (the memory runtime) leave it out.
   */
  claimExpiryReport?(taskId: string): Promise<boolean>;
  /** Resolves when the runtime can serve (its store answers); rejects with the reason otherwise. */
  checkReady?(): Promise<void>;
  /** Tasks and jobs by state right now, as cheaply as the runtime can count them (for metrics). */
  stats?(): Promise<RuntimeStats>;
  /**
   * Where the host counts the caps on what callers hold open (sessions, listen streams,
   * blocking waits): shared by every process of the app on a runtime that spans processes.
   * Without one the host counts in its own process's memory. The runtime closes it.
   */
  readonly slots?: SlotLedger;
  /**
   * Hands a POSTed payload to the callback hook `token` was issued for (see `ctx.callback`):
   * finds the task and key by the token's digest, applies `decide` to the freshest record
   * atomically (a second delivery sees the first one's write), and when it changed the record,
   * wakes the run parked for it, wherever it runs. `undefined` when no live hook has the token.
   * Runtimes without callbacks leave it out.
   */
  deliverCallback?(
    token: string,
    decide: (current: TaskRecord, key: string) => TaskChange | undefined,
  ): Promise<CallbackDeliveryResult | undefined>;
}

/** What `TaskRuntime.deliverCallback` found and did. */
export interface CallbackDeliveryResult {
  /** The record after the delivery (or as found, when `decide` changed nothing). */
  readonly record: TaskRecord;
  /** The hook's key in `record.callbacks`. */
  readonly key: string;
  readonly changed: boolean;
}

export interface RuntimeStats {
  /** Tasks by state: `working`, `input_required`, `parked` (waiting for answers without a worker). */
  readonly tasks?: Readonly<Record<string, number>>;
  /** Queue jobs by state (`waiting`, `active`, `delayed`), on runtimes with a queue. */
  readonly queue?: Readonly<Record<string, number>>;
  /** Tasks that could start but wait, by `WaitReason` (`principal_share`, `version`). */
  readonly waiting?: Readonly<Record<string, number>>;
  /**
   * Tasks parked (holding no worker) by `ParkReason`: `input`, `sleep`, `callback`, `children`
   * (the `mcp_task_parked_tasks{reason}` gauge); a runtime counts the reasons it can.
   */
  readonly parked?: Readonly<Record<string, number>>;
  /**
   * Parts of the store that did not answer (on a sharded runtime: shards whose Redis master is
   * lost); the counts above leave them out.
   */
  readonly unavailableShards?: readonly string[];
}

/** Progress a running task reports: the message becomes `statusMessage`, numbers `progress`. */
export interface ProgressUpdate {
  readonly message?: string;
  readonly progress?: number;
  readonly total?: number;
}

/** The record change a progress report makes, or `undefined` when it changes nothing. */
export function progressReportChange(current: TaskRecord, update: ProgressUpdate): TaskChange | undefined {
  // Progress only annotates a working task; it must not touch one that ended or waits for input.
  if (current.status !== 'working') return undefined;
  const message = update.message !== undefined && update.message !== current.statusMessage ? update.message : undefined;
  const numbers =
    update.progress !== undefined &&
    (update.progress !== current.progress?.progress || update.total !== current.progress?.total)
      ? { progress: update.progress, ...(update.total !== undefined && { total: update.total }) }
      : undefined;
  if (message === undefined && numbers === undefined) return undefined;
  return {
    status: 'working',
    ...(message !== undefined && { statusMessage: message }),
    ...(numbers && { progress: numbers }),
  };
}

/** Where and how a run happens, as the runtime knows it: for logs and traces. */
export interface RunPlacement {
  /** The process running it (`host:pid`). */
  readonly worker: string;
  readonly jobId?: string;
  /** The method already ran for this task before (after a pause or a lost worker). */
  readonly resumed?: boolean;
  /** Trace context captured when the task was created (W3C `traceparent`, ...). */
  readonly trace?: Readonly<Record<string, string>>;
}

export interface ExecutionControl {
  /** Aborted on cancel or shutdown. */
  readonly signal: AbortSignal;
  readonly placement?: RunPlacement;
  /**
   * Which attempt of the method this run is (1-based; 1 when absent). A runtime passes the
   * `next` of the `AttemptFailed` that scheduled it; a replay after a pause or a lost worker
   * keeps the number.
   */
  readonly attempt?: number;
  report(update: ProgressUpdate): void;
  /**
   * The answer to the question `key`: at once when it was given before (a resumed run), else
   * once the client answers. A runtime that will not hold the run that long rejects with
   * `TaskPaused` and runs the method again when the answer comes.
   */
  ask(key: string, pending: PendingInput): Promise<InputAnswer>;
  /** Runs `run` once over the task's life; later runs of the method get its stored result. */
  step<T>(name: string, run: () => Promise<T>): Promise<T>;
  /**
   * Sleeps `durationMs` from the first call with this `key` (the wake time is stored in the
   * record then: see `plannedWake`), holding no slot while it does: resolves at the wake time,
   * at once for a replayed sleep that is over, or rejects with `TaskPaused` (a `sleep` wait)
   * when the runtime parks the task and runs the method again at the wake time. Rejects with a
   * `RangeError` for a sleep that would outlast the task's TTL, and with the abort reason on a
   * cancel. Runtimes without it make the method wait in place.
   */
  sleep?(key: string, durationMs: number): Promise<void>;
  /**
   * The callback hook `key`: made (token, timeout) and indexed on the first run, found again on
   * a replay. Throws `CallbackTimeoutError` when the timeout would outlast the task. Runtimes
   * without callbacks leave it out (then `ctx.callback` refuses with a clear error).
   */
  callback?(key: string, request: CallbackRequest): Promise<RuntimeCallback>;
  /**
   * The child spawned under `key`: the one recorded in the task's `children` when a run before
   * made it, else the one `create` makes (its id follows from the parent's and the key, so a
   * create repeated after a lost worker finds the same child), recorded before it resolves.
   * `create` gets how many children the task has recorded (for the bound). Runtimes without it
   * cannot spawn.
   */
  spawn?(key: string, create: (childCount: number) => Promise<ChildEntry>): Promise<ChildEntry>;
  /**
   * The records of `children` once every one of them has ended. A runtime that will not hold
   * the run that long parks the task (no worker held) and rejects with `TaskPaused`; the method
   * runs again when they have ended, and finds them ended.
   */
  awaitChildren?(children: readonly ChildEntry[]): Promise<readonly TaskRecord[]>;
}

/**
 * A hook as the runtime hands it to the tool layer: its id and token, and the wait, which
 * resolves once the hook is settled (a POST, or its timeout). A runtime that will not hold the
 * run that long rejects the wait with `TaskPaused` and runs the method again when it settles.
 */
export interface RuntimeCallback {
  readonly id: string;
  readonly token: string;
  wait(): Promise<CallbackResult>;
}

/**
 * Creates child tasks through the engine's ordinary create (TTL, quotas, fair share), for the
 * tool layer's `ctx.spawn`: the host gives it to the registry. `TaskEngine` is one.
 */
export interface ChildSpawner {
  /**
   * Creates (or, when it exists, finds) the child `parent` spawns under `key`, owned by the
   * parent's principal. Refuses with `LimitExceededError('maxChildrenPerTask')` past the bound.
   */
  spawnChild(parent: ChildParent, key: string, request: CreateTaskRequestLike): Promise<TaskRecord>;
}

/** What `spawnChild` needs of the parent. */
export interface ChildParent {
  readonly taskId: string;
  readonly owner: string | null;
  /** An anonymous parent's live-task budget (its address's digest): its children count there too. */
  readonly liveBudget?: string;
  /** How many children the parent has recorded so far (the bound counts them). */
  readonly childCount: number;
}

/** The child's create request (the engine's `CreateTaskRequest`, without the wire-only fields). */
export interface CreateTaskRequestLike {
  readonly tool: string;
  readonly args: unknown;
  readonly toolTtlMs?: number | null;
  readonly toolPollIntervalMs?: number;
  readonly toolPriority?: number;
  readonly toolVersion?: string;
}

/** Runs one task's work; provided by the tool layer so runtimes never see user code. */
export interface TaskExecutor {
  /**
   * Runs one attempt of the task's work. A failed attempt that its tool's retry policy allows
   * to run again throws `AttemptFailed` (see there); every other end is an outcome.
   */
  execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome>;
  /** Per-tool limit on concurrent runs in one process, if the tool declares one. */
  concurrencyOf?(tool: string): number | undefined;
  /**
   * The version of each tool this process runs, by tool name (see `TaskRecord.toolVersion`). A
   * runtime runs a resumed task only where its tool's version equals the task's; executors
   * without it are never checked.
   */
  toolVersions?(): ReadonlyMap<string, string>;
  /**
   * Told of what a runtime sees before the method runs (a task waiting for its principal's
   * share), so it reaches the same lifecycle logs and metrics as the method's own events.
   */
  observe?(event: LifecycleEvent): void;
}

export type { TaskChange };
