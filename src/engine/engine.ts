/**
 * The task engine: what the protocol adapters call. It owns policy (ids, TTL, poll interval,
 * ownership) and leaves storage and execution to a `TaskRuntime`. It knows nothing of the
 * wire: no SDK types, no JSON-RPC codes.
 */
import { randomBytes } from 'node:crypto';
import { type Caller, clientTaskKey, isVisibleTo } from './caller.js';

export type { Caller } from './caller.js';
export { clientTaskKey } from './caller.js';

import { callbackDeliveryChange, callbackRefusal, looksLikeCallbackToken } from './callbacks.js';
import { CANCELLED_WITH_PARENT, childIdDraw, unfinishedChildren } from './children.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { LimitExceededError, TaskError, taskNotFound } from './errors.js';
import { TaskFollower } from './follow.js';
import { FollowerRegistry } from './follower-registry.js';
import { argumentsKey, checkIdempotencyKey, idempotencyClaim, sameRequest } from './idempotency.js';
import { type AnswerCheck, type AnswerOutcome, answerChange } from './inputs.js';
import { factsOf, noObserver, type TaskFacts, type TaskObserver } from './lifecycle.js';
import { checkPolicy, DEFAULT_TASK_POLICY, resolvePollInterval, resolveTtl, type TaskPolicy } from './policy.js';
import { RunTimes, suggestPollInterval } from './poll-advice.js';
import type {
  ChildParent,
  ChildSpawner,
  CreateTaskRequestLike,
  IdempotencyClaim,
  TaskListener,
  TaskRuntime,
} from './runtime.js';
import { jsonBytes } from './sizes.js';
import { expiresAt, type InputAnswer, isTerminal, MAX_PRIORITY, type TaskRecord } from './task.js';

export interface CreateTaskRequest {
  readonly tool: string;
  readonly args: unknown;
  /** Retention the client asked for (2025-11-25), if any. */
  readonly requestedTtlMs?: number | null;
  readonly toolTtlMs?: number | null;
  readonly toolPollIntervalMs?: number;
  /** Answers collected before the task existed (questions asked on the call itself). */
  readonly inputAnswers?: Readonly<Record<string, InputAnswer>>;
  /**
   * The caller's idempotency key (`_meta["mcp-task-server/idempotencyKey"]` or the
   * `Idempotency-Key` header), unchecked: the engine bounds it.
   */
  readonly idempotencyKey?: unknown;
  /** The tool is `@Task({ idempotent: true })`: without a key, one is derived from the arguments. */
  readonly idempotent?: boolean;
  /** `@Task({ priority })`: the task's priority unless the call may and does set its own. */
  readonly toolPriority?: number;
  /**
   * The call's own priority (`_meta["mcp-task-server/priority"]`), unchecked; it counts only
   * when `priorityFromCall` is set, and is ignored otherwise.
   */
  readonly requestedPriority?: unknown;
  /** `@Task({ priorityFromCall: true })`: the call's `requestedPriority` overrides the tool's. */
  readonly priorityFromCall?: boolean;
  /** The version of the tool in this process (`TaskRecord.toolVersion`), if known. */
  readonly toolVersion?: string;
}

/** Where a call's priority comes from, for the message that refuses it. */
export const PRIORITY_FIELD = '_meta["mcp-task-server/priority"]';

/** Where an idempotency key came from, for the messages that refuse it. */
export const IDEMPOTENCY_KEY_FIELD = 'the idempotency key (_meta["mcp-task-server/idempotencyKey"] or Idempotency-Key)';

export interface TaskPage {
  readonly tasks: readonly TaskRecord[];
  readonly nextCursor?: string;
}

export interface TaskEngineOptions {
  readonly runtime: TaskRuntime;
  readonly policy?: Partial<TaskPolicy>;
  readonly pageSize?: number;
  /** A `tasks/list` page also stops before its tasks' summaries add up to more bytes than this. */
  readonly maxListPageBytes?: number;
  readonly clock?: () => number;
  /** Told of each task created, cancelled or answered through this engine. */
  readonly observer?: TaskObserver;
  /**
   * The shortest poll interval a task may suggest besides `policy.minPollIntervalMs`: the pace
   * the read rate limit comfortably allows (the host derives it from `readsPerSecond`).
   */
  readonly pollFloorMs?: number;
}

export const CANCELLED_BY_CLIENT = 'cancelled by client';

/** A callback payload checked against its schema: the parsed payload, or the field that does not fit. */
export type CallbackCheck =
  | { readonly ok: true; readonly payload: unknown }
  | { readonly ok: false; readonly problem: string };

/** What `TaskEngine.deliverCallback` did with a POST: took it, or why not. */
export type CallbackDelivery =
  | { readonly status: 'unknown' }
  | {
      readonly status: 'received' | 'ended' | 'timed_out' | 'used';
      readonly task: TaskFacts;
      readonly name: string;
    }
  | { readonly status: 'invalid'; readonly task: TaskFacts; readonly name: string; readonly problem: string };

/** Parents a cascade cancel follows at most (a chain of children of children). */
const MAX_CASCADE_DEPTH = 32;

export class TaskEngine implements ChildSpawner {
  readonly runtime: TaskRuntime;
  readonly policy: TaskPolicy;
  private readonly pageSize: number;
  private readonly maxListPageBytes: number;
  private readonly clock: () => number;
  /** Live `TaskFollower`s (they join it themselves): their shared subscription, timers and reads. */
  readonly followers: FollowerRegistry;
  private waiting = 0;
  private readonly observer: TaskObserver;
  /** How long each tool's recent tasks took: what the suggested poll interval follows. */
  readonly runTimes = new RunTimes();
  private readonly pollFloorMs: number;

  constructor(options: TaskEngineOptions) {
    this.runtime = options.runtime;
    this.observer = options.observer ?? noObserver;
    this.policy = checkPolicy({ ...DEFAULT_TASK_POLICY, ...options.policy });
    this.pageSize = options.pageSize ?? 50;
    this.maxListPageBytes = options.maxListPageBytes ?? 1024 * 1024;
    this.clock = options.clock ?? Date.now;
    this.pollFloorMs = Math.max(this.policy.minPollIntervalMs, options.pollFloorMs ?? 0);
    this.followers = new FollowerRegistry({
      subscribe: (listener, onGap) => this.runtime.subscribe(listener, onGap),
      read: (taskId) => this.runtime.get(taskId),
      expired: (last) => this.reportExpired(last),
    });
  }

  /**
   * A followed task was found gone at its expiry. Runtimes that report expiry themselves never
   * get here with a claim; on the others, one process in all says it (see `claimExpiryReport`).
   */
  private reportExpired(last: TaskRecord): void {
    if (!this.runtime.claimExpiryReport) return;
    this.runtime.claimExpiryReport(last.taskId).then(
      (mine) => {
        if (mine) this.observer.observe({ type: 'expired', task: this.facts(last) });
      },
      () => {
        // Unreachable store: the fact goes unreported rather than reported twice.
      },
    );
  }

  /**
   * Creates a task. With an idempotency key (the caller's, or one derived from the arguments of
   * an idempotent tool), a repeat within the window returns the task the first call created,
   * as it is now, and starts nothing; the same key with other arguments is refused
   * (`IDEMPOTENCY_CONFLICT`).
   */
  async create(caller: Caller, request: CreateTaskRequest): Promise<TaskRecord> {
    const claim = this.claimOf(caller, request);
    const taskId = claim && this.runtime.idForClaim ? this.runtime.idForClaim(claim, newTaskId) : newTaskId();
    return this.store(
      caller,
      taskId,
      request,
      { ttlMs: resolveTtl(request.requestedTtlMs, request.toolTtlMs, this.policy) },
      claim,
    );
  }

  /** The task if `caller` may see it; a foreign task is "not found", never "forbidden". */
  async get(caller: Caller, taskId: string): Promise<TaskRecord> {
    const record = await this.runtime.get(taskId);
    if (!record || !isVisibleTo(record, caller)) throw taskNotFound(taskId);
    return this.advised(record);
  }

  /**
   * The record as a caller sees it: an ended task teaches its tool's run times; one still
   * working suggests the poll interval that fits its tool (see `suggestPollInterval`).
   */
  advised(record: TaskRecord): TaskRecord {
    if (isTerminal(record.status)) {
      this.runTimes.learn(record);
      return record;
    }
    const pollIntervalMs = suggestPollInterval(record, this.clock(), this.runTimes, this.pollFloorMs);
    return pollIntervalMs === record.pollIntervalMs ? record : { ...record, pollIntervalMs };
  }

  /**
   * Cancels a task that is still running. Throws `TASK_TERMINAL` when it already ended, so each
   * dialect can decide whether that is an error (2025-11-25) or an idempotent ack (2026-07-28).
   */
  async cancel(caller: Caller, taskId: string): Promise<TaskRecord> {
    const current = await this.get(caller, taskId);
    if (isTerminal(current.status)) {
      throw new TaskError('TASK_TERMINAL', `Cannot cancel task: already in terminal status '${current.status}'`);
    }
    const after = await this.runtime.cancel(taskId, CANCELLED_BY_CLIENT);
    if (!after) throw taskNotFound(taskId);
    if (after.status !== 'cancelled') {
      // The work finished between our read and the cancel: report what really happened.
      throw new TaskError('TASK_TERMINAL', `Cannot cancel task: already in terminal status '${after.status}'`);
    }
    this.observer.observe({ type: 'cancelled', task: this.facts(after) });
    await this.cancelChildren(after, 0);
    return after;
  }

  /**
   * Cancels the unfinished children of a task that was cancelled (and theirs, down the tree):
   * a child the parent no longer waits for must not hold a worker or its principal's quota.
   */
  private async cancelChildren(parent: TaskRecord, depth: number): Promise<void> {
    if (depth >= MAX_CASCADE_DEPTH) return;
    for (const childId of unfinishedChildren(parent)) {
      const child = await this.runtime.cancel(childId, CANCELLED_WITH_PARENT);
      if (child?.status !== 'cancelled' || child.statusMessage !== CANCELLED_WITH_PARENT) continue;
      this.observer.observe({ type: 'cancelled', task: this.facts(child) });
      await this.cancelChildren(child, depth + 1);
    }
  }

  /**
   * Creates the child `parent` spawns under `key` (`ctx.spawn`), through the same path as a
   * client's create: the parent's principal owns it, and its quotas, fair share and TTL apply.
   * Its id follows from the parent's id and the key (on the parent's shard), so a repeat finds
   * the child made before rather than starting another. Past `maxChildrenPerTask` children the
   * spawn is refused.
   */
  async spawnChild(parent: ChildParent, key: string, request: CreateTaskRequestLike): Promise<TaskRecord> {
    const draw = childIdDraw(parent.taskId, key);
    const taskId = this.runtime.idForClaim ? this.runtime.idForClaim(parent.taskId, draw) : draw();
    const existing = await this.runtime.get(taskId);
    if (existing) return existing;
    const bound = this.policy.maxChildrenPerTask;
    if (parent.childCount >= bound) {
      throw new LimitExceededError(
        'maxChildrenPerTask',
        bound,
        `Task ${parent.taskId} has started ${parent.childCount} child tasks, the most one task may start (maxChildrenPerTask is ${bound}); wait for children in batches or raise the bound`,
      );
    }
    try {
      return await this.store(
        // An anonymous parent's children count in its address's budget, as it does.
        { principal: parent.owner, ...(parent.liveBudget !== undefined && { liveBudget: parent.liveBudget }) },
        taskId,
        request,
        { ttlMs: resolveTtl(undefined, request.toolTtlMs, this.policy) },
        undefined,
        { taskId: parent.taskId, key },
      );
    } catch (error) {
      // Created by an earlier run whose worker was lost before it recorded the child.
      if (!(error instanceof TaskError && error.code === 'DUPLICATE_TASK')) throw error;
      const created = await this.runtime.get(taskId);
      if (!created) throw error;
      return created;
    }
  }

  /**
   * Delivers answers to the task's outstanding questions. Answers to keys that are not
   * outstanding are ignored; invalid ones are refused and the question stays open.
   */
  async answer(
    caller: Caller,
    taskId: string,
    responses: Readonly<Record<string, unknown>>,
    check: AnswerCheck,
  ): Promise<AnswerOutcome> {
    await this.get(caller, taskId);
    let outcome: AnswerOutcome = { change: undefined, accepted: [], rejected: {}, ignored: [] };
    const after = await this.runtime.answer(taskId, (current) => {
      outcome = answerChange(current, responses, check);
      return outcome.change;
    });
    if (!after) throw taskNotFound(taskId);
    if (outcome.accepted.length > 0) {
      this.observer.observe({ type: 'answered', task: this.facts(after), keys: outcome.accepted });
    }
    return outcome;
  }

  /**
   * Hands a POSTed payload to the callback hook its token names (the callback route; the token
   * is the capability, so there is no caller). `check` validates the payload against the hook's
   * generated schema: a payload that does not fit changes nothing and the task keeps waiting.
   * A refusal says why: `unknown` (no such token, or its task is gone), `ended` (the task
   * ended, cancelled or not), `timed_out`, `used` (a payload came already).
   */
  async deliverCallback(
    token: string,
    payload: unknown,
    check: (tool: string, name: string, payload: unknown) => CallbackCheck,
  ): Promise<CallbackDelivery> {
    if (!this.runtime.deliverCallback || !looksLikeCallbackToken(token)) return { status: 'unknown' };
    let verdict: CallbackDelivery = { status: 'unknown' };
    const result = await this.runtime.deliverCallback(token, (current, key) => {
      const name = current.callbacks?.[key]?.name ?? key;
      const task = this.facts(current);
      const refusal = callbackRefusal(current, key, this.clock());
      if (refusal) {
        verdict = refusal === 'unknown' ? { status: 'unknown' } : { status: refusal, task, name };
        return undefined;
      }
      const checked = check(current.tool, name, payload);
      if (!checked.ok) {
        verdict = { status: 'invalid', task, name, problem: checked.problem };
        return undefined;
      }
      verdict = { status: 'received', task, name };
      return callbackDeliveryChange(current, key, checked.payload, this.clock());
    });
    if (!result) return { status: 'unknown' };
    // Assigned inside the callback, which TypeScript's flow analysis does not see.
    const settled = verdict as CallbackDelivery;
    if (settled.status === 'received') {
      // Ended between the read and the write: the state machine dropped the delivery.
      if (!result.changed) return { status: 'ended', task: settled.task, name: settled.name };
      this.observer.observe({
        type: 'woke',
        task: settled.task,
        reason: 'callback',
        name: settled.name,
        outcome: 'received',
      });
    }
    return settled;
  }

  /** Deletes a task the caller owns, stopping its work first (SEP-1686 `tasks/delete`). */
  async delete(caller: Caller, taskId: string): Promise<void> {
    const record = await this.get(caller, taskId);
    if (!(await this.runtime.remove(taskId))) throw taskNotFound(taskId);
    // Its children go with it: nobody is left to wait for them.
    if (record.children) await this.cancelChildren(record, 0);
    this.observer.observe({ type: 'deleted', task: this.facts(record) });
  }

  /**
   * The adapters call this when they hand a task's result (or error) to the caller, so the
   * audit trail (with create, answer, cancel and delete) says who read what.
   */
  resultRead(_caller: Caller, record: TaskRecord): void {
    this.observer.observe({ type: 'result_read', task: this.facts(record) });
  }

  /**
   * Creates a task under an id the client chose (the SEP-1686 shim), stored in the caller's
   * namespace (`clientTaskKey`): another principal may pick the same id without either learning
   * of the other. An id the caller already uses is refused, atomically, by the runtime's create.
   */
  async createWithId(
    caller: Caller,
    clientTaskId: string,
    request: CreateTaskRequest & { keepAliveMs?: number },
  ): Promise<TaskRecord> {
    // Kept until it ends (within the cap), then for its keepAlive (see `keepAliveMs`).
    const claim = this.claimOf(caller, request);
    return this.store(
      caller,
      clientTaskKey(caller, clientTaskId),
      request,
      {
        ttlMs: resolveTtl(null, undefined, this.policy),
        clientTaskId,
        ...(request.keepAliveMs !== undefined && { keepAliveMs: request.keepAliveMs }),
      },
      claim,
    );
  }

  /** The claim an idempotent create takes, or `undefined` when the create is not idempotent. */
  private claimOf(caller: Caller, request: CreateTaskRequest): string | undefined {
    const key =
      request.idempotencyKey !== undefined
        ? checkIdempotencyKey(request.idempotencyKey, IDEMPOTENCY_KEY_FIELD)
        : request.idempotent
          ? argumentsKey(request.args)
          : undefined;
    return key === undefined ? undefined : idempotencyClaim(caller, request.tool, key);
  }

  /** Until when a claim made now holds: the window, and never past the task's own expiry. */
  private claimUntil(claim: string, createdAt: number, ttlMs: number | null): IdempotencyClaim {
    const window = this.policy.idempotencyWindowMs;
    const taskEnd = expiresAt({ createdAt, ttlMs });
    return { claim, expiresAt: window === null ? taskEnd : Math.min(taskEnd, createdAt + window) };
  }

  private async store(
    caller: Caller,
    taskId: string,
    request: CreateTaskRequest,
    retention: { ttlMs: number | null; keepAliveMs?: number; clientTaskId?: string },
    claim?: string,
    parent?: { readonly taskId: string; readonly key: string },
  ): Promise<TaskRecord> {
    const now = this.clock();
    const maxLive = this.policy.maxLiveTasksPerOwner;
    let record: TaskRecord;
    try {
      record = await this.runtime.create(
        {
          taskId,
          owner: caller.principal,
          ...(caller.principal === null && caller.liveBudget !== undefined && { liveBudget: caller.liveBudget }),
          tool: request.tool,
          args: request.args,
          status: 'working',
          createdAt: now,
          lastUpdatedAt: now,
          pollIntervalMs: resolvePollInterval(request.toolPollIntervalMs, this.policy),
          revision: 0,
          ...retention,
          ...(request.inputAnswers && { inputAnswers: request.inputAnswers }),
          ...priorityOf(request),
          ...(request.toolVersion !== undefined && { toolVersion: request.toolVersion }),
          ...(parent && { parent }),
        },
        {
          ...(parent && { parentTaskId: parent.taskId }),
          ...(maxLive !== null && { maxLiveForOwner: maxLive }),
          ...(claim !== undefined && { idempotency: this.claimUntil(claim, now, retention.ttlMs) }),
          ...(this.policy.maxRunningTasksPerOwner !== null && {
            maxRunningForOwner: this.policy.maxRunningTasksPerOwner,
          }),
        },
      );
    } catch (error) {
      if (!(error instanceof TaskError && error.code === 'LIMIT_EXCEEDED') || maxLive === null) throw error;
      throw new LimitExceededError(
        'maxLiveTasksPerPrincipal',
        maxLive,
        `Too many unfinished tasks for this caller: the limit is ${maxLive} (maxLiveTasksPerPrincipal); wait for some to end or cancel them`,
      );
    }
    if (record.taskId !== taskId) return this.advised(this.repeated(caller, record, request));
    this.observer.observe({
      type: 'created',
      task: this.facts(record),
      ttlMs: record.ttlMs,
      ...(record.priority !== undefined && { priority: record.priority }),
      ...(record.toolVersion !== undefined && { toolVersion: record.toolVersion }),
    });
    return this.advised(record);
  }

  /** The runtime found the claim held: the first call's task, if this is the same request. */
  private repeated(caller: Caller, existing: TaskRecord, request: CreateTaskRequest): TaskRecord {
    // The claim is a digest of principal, tool and key; checked again so a digest collision
    // could never hand over another principal's task.
    if (!isVisibleTo(existing, caller) || !sameRequest(existing, request.tool, request.args)) {
      throw new TaskError(
        'IDEMPOTENCY_CONFLICT',
        `The idempotency key was already used for a call of ${existing.tool === request.tool ? request.tool : 'another tool'} with other arguments; use a new key for a new request`,
      );
    }
    this.observer.observe({ type: 'idempotent_hit', task: this.facts(existing), status: existing.status });
    return existing;
  }

  private facts(record: TaskRecord) {
    return factsOf(record, this.runtime.jobIdOf?.(record.taskId));
  }

  async list(caller: Caller, cursor?: string): Promise<TaskPage> {
    if (caller.principal === null) {
      throw new TaskError('LISTING_UNAVAILABLE', 'Listing tasks needs an identified caller');
    }
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const page = await this.runtime.list(caller.principal, this.pageSize, after);
    // Bounded by bytes as well as count: the page ends before the task that would pass the
    // bound (always with at least one task, so a listing cannot stall).
    let bytes = 0;
    let kept = 0;
    for (const record of page.records) {
      bytes += jsonBytes(listedPart(record));
      if (kept > 0 && bytes > this.maxListPageBytes) break;
      kept++;
    }
    const tasks = page.records.slice(0, kept).map((record) => this.advised(record));
    const last = tasks.at(-1);
    const next = kept < page.records.length && last ? { createdAt: last.createdAt, taskId: last.taskId } : page.next;
    return { tasks, ...(next && { nextCursor: encodeCursor(next) }) };
  }

  /**
   * Resolves with the task once it is terminal. Driven by runtime events, not by polling, so
   * a task that takes 5 ms is answered in about 5 ms whatever its poll interval.
   */
  async waitForTerminal(caller: Caller, taskId: string, signal?: AbortSignal): Promise<TaskRecord> {
    return this.waitFor(caller, taskId, (record) => isTerminal(record.status), signal);
  }

  /**
   * Resolves with the first state of the task (current or future) that satisfies `accept`.
   * Rejects with "not found" when the task expires or is deleted meanwhile (see `TaskFollower`),
   * and with the signal's reason once `signal` aborts: the waiter is gone at once either way.
   */
  async waitFor(
    caller: Caller,
    taskId: string,
    accept: (record: TaskRecord) => boolean,
    signal?: AbortSignal,
  ): Promise<TaskRecord> {
    signal?.throwIfAborted();
    return new Promise<TaskRecord>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        follower.close();
        this.waiting--;
        signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = () => finish(() => reject(signal?.reason));
      this.waiting++;
      const follower = new TaskFollower(this, caller, {
        onChange: (record) => {
          if (accept(record)) finish(() => resolve(this.advised(record)));
        },
        onGone: () => finish(() => reject(taskNotFound(taskId))),
        onUnavailable: (_id, error) => finish(() => reject(error)),
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      follower.follow(taskId);
    });
  }

  /** What is waiting on tasks in this process right now: for debug stats and leak tests. */
  waiterStats(): { waiters: number; followers: number; followedTasks: number } {
    return { waiters: this.waiting, followers: this.followers.size, followedTasks: this.followers.followedTasks() };
  }

  subscribe(listener: TaskListener, onGap?: () => void): () => void {
    return this.runtime.subscribe(listener, onGap);
  }
}

/**
 * The task's priority: the call's when the tool lets calls choose and this one did (bounded:
 * a whole number from 0 to `MAX_PRIORITY`), else the tool's; nothing for 0, the default.
 */
function priorityOf(request: CreateTaskRequest): { priority?: number } {
  const requested = request.priorityFromCall ? request.requestedPriority : undefined;
  if (requested !== undefined && !isPriority(requested)) {
    throw new TaskError(
      'INVALID_PRIORITY',
      `${PRIORITY_FIELD} must be a whole number from 0 to ${MAX_PRIORITY} (lower runs first)`,
    );
  }
  const priority = requested ?? request.toolPriority ?? 0;
  return priority === 0 ? {} : { priority };
}

function isPriority(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PRIORITY;
}

/** What a listing shows of a task: everything but its arguments, outcome and replay state. */
function listedPart(record: TaskRecord): Partial<TaskRecord> {
  const { args: _args, outcome: _outcome, steps: _steps, inputAnswers: _answers, sleeps: _sleeps, ...listed } = record;
  return listed;
}

/** Random bytes drawn from the CSPRNG in blocks: one `randomBytes(16)` call costs more than a create. */
const ID_POOL_BYTES = 4096;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

/**
 * 128 random bits, URL- and Redis-key-safe, starting with a letter or digit: an id that starts
 * with `-` reads as an option to every command line it is pasted into (`mcp-task answer <url>
 * -Xy…` was a usage error one time in 64), so such draws are drawn again.
 */
export function newTaskId(): string {
  for (;;) {
    if (idPoolOffset + 16 > idPool.length) {
      idPool = randomBytes(ID_POOL_BYTES);
      idPoolOffset = 0;
    }
    const id = idPool.toString('base64url', idPoolOffset, idPoolOffset + 16);
    idPoolOffset += 16;
    if (id[0] !== '-' && id[0] !== '_') return id;
  }
}
