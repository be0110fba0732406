/**
 * The in-process runtime: the embedded default when no Redis is configured, and the fastest
 * one for tests. It passes the same contract suite as the BullMQ runtime; what it cannot give
 * is durability: tasks end with the process.
 */

import { isRetryMessage } from '../../engine/attempts.js';
import {
  type CallbackAddress,
  type CallbackRequest,
  type CallbackResult,
  callbackChange,
  callbackDue,
  callbackTimeoutChange,
  callbackTokenHash,
  callbackWaitChange,
  newCallbackState,
  settledCallback,
} from '../../engine/callbacks.js';
import { type ChildEntry, childEndedChange, childrenMessage, spawnChange } from '../../engine/children.js';
import { isAttemptFailed, TaskError } from '../../engine/errors.js';
import { isQueuedNote, shareQueuedMessage } from '../../engine/fair-share.js';
import { askChange, stepChange } from '../../engine/inputs.js';
import { factsOf, noObserver, PROCESS_NAME, type TaskObserver } from '../../engine/lifecycle.js';
import { internalErrorOutcome } from '../../engine/outcomes.js';
import type {
  CallbackDeliveryResult,
  CreateOptions,
  ExecutionControl,
  ListPage,
  ListPosition,
  RuntimeStats,
  TaskExecutor,
  TaskListener,
  TaskRuntime,
} from '../../engine/runtime.js';
import { progressReportChange } from '../../engine/runtime.js';
import { plannedWake, sleepChange, wokeChange } from '../../engine/sleeps.js';
import {
  expiresAt,
  type InputAnswer,
  isTerminal,
  type NewTaskRecord,
  type PendingInput,
  type TaskRecord,
} from '../../engine/task.js';
import { applyChange, outcomeChange, type TaskChange } from '../../engine/transitions.js';
import { captureTraceContext } from '../../observe/tracing.js';
import { MemorySlotLedger } from './slot-ledger.js';
import { WaitingRuns } from './waiting-runs.js';

export interface MemoryRuntimeOptions {
  readonly executor: TaskExecutor;
  /**
   * Tasks running at once in this process (default unlimited; the task server's default is 8);
   * the rest wait their turn by priority (lower first), then in creation order, `working` with the message `queued`. A task
   * waiting for an answer does not count: it uses no CPU, and must not hold the others up.
   */
  readonly concurrency?: number;
  readonly clock?: () => number;
  /**
   * Tells of moves of `clock` that skip time (a test clock's `advance`): sleeps due by the new
   * time wake at once rather than at their timer. Returns how to stop listening.
   */
  readonly clockAdvances?: (listener: () => void) => () => void;
  /** Told when a task expires, sleeps and wakes. */
  readonly observer?: TaskObserver;
}

/** A run waiting out a `ctx.sleep` in place, its slot left to the queue. */
interface Sleeper {
  readonly until: number;
  timer: NodeJS.Timeout | undefined;
  readonly wake: () => void;
}

/** setTimeout's longest delay; longer sleeps wait in steps. */
const MAX_TIMER_MS = 2_147_483_647;

interface Running {
  readonly controller: AbortController;
  readonly tool: string;
  /** The owner's key for fair shares ('' for anonymous callers, who share one). */
  readonly owner: string;
}

/**
 * The in-process runtime: records in a map, work on this process's event loop, nothing
 * survives the process. It is the default when no Redis is configured, and what tests and the
 * test harness use; it passes the same contract suite as the BullMQ runtime, so an app that
 * works on it behaves the same on Redis.
 */
export class MemoryTaskRuntime implements TaskRuntime {
  readonly kind = 'memory';
  readonly durable = false;
  /** The caps on what callers hold open: this process is the whole app, so memory counts them all. */
  readonly slots = new MemorySlotLedger();

  private readonly executor: TaskExecutor;
  private readonly concurrency: number;
  private readonly clock: () => number;
  private readonly records = new Map<string, TaskRecord>();
  /** Task ids per owner, ordered by (createdAt, taskId): the order every runtime lists in. */
  private readonly owners = new Map<string, string[]>();
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Running>();
  /** Running tasks that wait in place for an answer, a callback or their children, leaving their slot to the queue. */
  private readonly waiting = new WaitingRuns();
  /** Ids of the tasks that have not ended, per owner (anonymous under ''), for the live-task quota. */
  private readonly live = new Map<string, Set<string>>();
  private readonly queue: string[] = [];
  /** Idempotency claims: the task holding each, until when (see `IdempotencyClaim`). */
  private readonly claims = new Map<string, { readonly taskId: string; readonly expiresAt: number }>();
  /** The claim each task holds, so forgetting the task drops it. */
  private readonly claimOfTask = new Map<string, string>();
  private readonly listeners = new Set<TaskListener>();
  /** The trace context each queued task was created in, so its run joins that trace. */
  private readonly traces = new Map<string, Record<string, string>>();
  private readonly observer: TaskObserver;
  /** Each queued task's fair share (`maxRunningForOwner`), when the engine gave one. */
  private readonly shares = new Map<string, number>();
  /** Queued tasks held back by their owner's share right now (told `waiting` once per wait). */
  private readonly heldForShare = new Set<string>();
  /** The attempt each task runs next, once one failed (absent: the first). */
  private readonly attempts = new Map<string, number>();
  /** Back-offs before a task's next attempt: a timer each, no slot held. */
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  /** Running tasks waiting out a sleep, and so leaving their slot to the queue. */
  private readonly sleeping = new Map<string, Sleeper>();
  private readonly stopClockListener: (() => void) | undefined;
  /** Callback tokens by digest: the task and key each was issued for (dropped with the task). */
  private readonly callbackIndex = new Map<string, CallbackAddress>();
  /** Runs waiting for a callback: each looks again at its hook when told (`clockMoved`). */
  private readonly callbackWaits = new Map<string, () => void>();
  private closed = false;

  constructor(options: MemoryRuntimeOptions) {
    this.executor = options.executor;
    this.observer = options.observer ?? noObserver;
    this.concurrency = options.concurrency ?? Number.POSITIVE_INFINITY;
    this.clock = options.clock ?? Date.now;
    this.stopClockListener = options.clockAdvances?.(() => this.checkSleepers());
  }

  async create(given: NewTaskRecord, options: CreateOptions = {}): Promise<TaskRecord> {
    if (this.closed) throw new Error('The memory runtime is closed');
    const taken = await this.get(given.taskId);
    // From here to the end of the create nothing awaits: the claim's check and its taking are
    // one step of the event loop, so two racing creates cannot both take it. A held claim is
    // checked before the id, as on BullMQ: a repeat under its first call's id is a repeat.
    const claim = options.idempotency;
    if (claim) {
      const held = this.claims.get(claim.claim);
      const holder = held && held.expiresAt > this.clock() ? this.liveRecord(held.taskId) : undefined;
      if (holder) return holder;
    }
    if (taken) throw new TaskError('DUPLICATE_TASK', `Task ID already exists: ${given.taskId}`);
    const live = this.live.get(liveKey(given)) ?? new Set<string>();
    if (options.maxLiveForOwner !== undefined && live.size >= options.maxLiveForOwner) {
      throw new TaskError('LIMIT_EXCEEDED', `The owner already has ${live.size} unfinished tasks`);
    }
    live.add(given.taskId);
    this.live.set(liveKey(given), live);
    if (claim) this.takeClaim(claim.claim, given.taskId, claim.expiresAt);
    // No slot free: it waits, and says so.
    const waits = this.active() + this.queue.length >= this.concurrency;
    const record: TaskRecord = waits && given.statusMessage === undefined ? { ...given, statusMessage: QUEUED } : given;
    this.records.set(record.taskId, record);
    if (record.owner !== null) {
      const ids = this.owners.get(record.owner) ?? [];
      // Nearly always an append; walk back only past ids created in the same millisecond.
      let index = ids.length;
      while (index > 0 && isAfter(this.records.get(ids[index - 1] as string), record)) index--;
      ids.splice(index, 0, record.taskId);
      this.owners.set(record.owner, ids);
    }
    this.scheduleExpiry(record);
    this.emit(record);
    const trace = captureTraceContext();
    if (trace) this.traces.set(record.taskId, trace);
    this.enqueue(record);
    if (options.maxRunningForOwner !== undefined) this.shares.set(record.taskId, options.maxRunningForOwner);
    // Start work after the creating request has its answer, never inside it.
    setImmediate(() => this.drain());
    return record;
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    return this.liveRecord(taskId);
  }

  /** `get` without the promise: the record unless it is unknown or past its TTL. */
  private liveRecord(taskId: string): TaskRecord | undefined {
    const record = this.records.get(taskId);
    if (record && expiresAt(record) <= this.clock()) {
      this.forget(taskId, 'expired');
      return undefined;
    }
    return record;
  }

  /** Holds `claim` for `taskId` until `until`; a timer drops it then, so claims do not pile up. */
  private takeClaim(claim: string, taskId: string, until: number): void {
    this.claims.set(claim, { taskId, expiresAt: until });
    this.claimOfTask.set(taskId, claim);
    const delay = until - this.clock();
    if (!Number.isFinite(delay) || delay > 2_147_483_647) return;
    setTimeout(() => this.dropClaim(taskId), Math.max(0, delay)).unref();
  }

  private dropClaim(taskId: string): void {
    const claim = this.claimOfTask.get(taskId);
    if (claim === undefined) return;
    this.claimOfTask.delete(taskId);
    if (this.claims.get(claim)?.taskId === taskId) this.claims.delete(claim);
  }

  /** Counted from memory: cheap enough for every scrape. */
  async stats(): Promise<RuntimeStats> {
    const tasks = { working: 0, input_required: 0, parked: 0 };
    for (const record of this.records.values()) {
      if (record.status === 'working') tasks.working++;
      else if (record.status === 'input_required') tasks.input_required++;
    }
    // One process runs one version of each tool, so no task here ever waits for another.
    return {
      tasks,
      waiting: { principal_share: this.heldForShare.size, version: 0 },
      parked: { ...this.waiting.counts(), sleep: this.sleeping.size },
    };
  }

  async list(owner: string, limit: number, after?: ListPosition): Promise<ListPage> {
    // A copy: reading an expired record forgets it, which edits the owner's list.
    const ids = [...(this.owners.get(owner) ?? [])];
    const records: TaskRecord[] = [];
    // Ids are sorted by position, so the page starts at the first one after the cursor.
    let index = 0;
    if (after) {
      while (index < ids.length && !isAfter(this.records.get(ids[index] as string), after)) index++;
    }
    for (; index < ids.length && records.length < limit; index++) {
      const record = await this.get(ids[index] as string);
      if (record) records.push(record);
    }
    const last = records.at(-1);
    const more = index < ids.length;
    return { records, ...(more && last && { next: { createdAt: last.createdAt, taskId: last.taskId } }) };
  }

  async cancel(taskId: string, statusMessage: string): Promise<TaskRecord | undefined> {
    const record = await this.get(taskId);
    if (!record) return undefined;
    if (isTerminal(record.status)) return record;
    const cancelled = this.write(record, { status: 'cancelled', statusMessage });
    const queued = this.queue.indexOf(taskId);
    if (queued >= 0) this.queue.splice(queued, 1);
    this.leaveQueue(taskId);
    clearTimeout(this.retryTimers.get(taskId));
    this.retryTimers.delete(taskId);
    this.attempts.delete(taskId);
    this.running.get(taskId)?.controller.abort(new Error(statusMessage));
    return cancelled;
  }

  async answer(
    taskId: string,
    decide: (current: TaskRecord) => TaskChange | undefined,
  ): Promise<TaskRecord | undefined> {
    const record = await this.get(taskId);
    if (!record) return undefined;
    const change = decide(record);
    // The waiting method hears of its answer through the change event (see `ask`).
    return change ? this.write(record, change) : record;
  }

  /** Finds the hook by the token's digest, applies `decide`, and the waiting run hears of it through the change. */
  async deliverCallback(
    token: string,
    decide: (current: TaskRecord, key: string) => TaskChange | undefined,
  ): Promise<CallbackDeliveryResult | undefined> {
    const address = this.callbackIndex.get(callbackTokenHash(token));
    // Read and written in one step of the event loop: of two racing deliveries, one sees the other's write.
    const record = address && this.liveRecord(address.taskId);
    if (!address || !record) return undefined;
    const change = decide(record, address.key);
    return change
      ? { record: this.write(record, change), key: address.key, changed: true }
      : { record, key: address.key, changed: false };
  }

  /**
   * Looks again at every callback wait: for tests whose clock jumps (`createTestHarness`'s
   * `clock.advance`), so a timeout the clock passed fires without waiting for real time.
   */
  clockMoved(): void {
    for (const recheck of [...this.callbackWaits.values()]) recheck();
  }

  async remove(taskId: string): Promise<boolean> {
    if (!(await this.get(taskId))) return false;
    await this.cancel(taskId, 'deleted by client');
    this.forget(taskId);
    return true;
  }

  subscribe(listener: TaskListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    for (const { controller } of this.running.values()) controller.abort(new Error('The server is shutting down'));
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    this.expiryTimers.clear();
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    await this.slots.close();
    this.stopClockListener?.();
  }

  /**
   * Into the waiting line by priority, lower first, as BullMQ orders its jobs: behind every
   * task of the same or a lower number, so equal priorities keep creation order.
   */
  private enqueue(record: TaskRecord): void {
    const priority = record.priority ?? 0;
    let index = this.queue.length;
    while (index > 0 && (this.records.get(this.queue[index - 1] as string)?.priority ?? 0) > priority) index--;
    this.queue.splice(index, 0, record.taskId);
  }

  /** Runs holding a slot: not waiting for an answer or a sleep's end. */
  private active(): number {
    let waiting = 0;
    for (const taskId of this.running.keys()) if (this.isWaiting(taskId)) waiting++;
    return this.running.size - waiting;
  }

  private isWaiting(taskId: string): boolean {
    return this.waiting.has(taskId) || this.sleeping.has(taskId);
  }

  private drain(): void {
    for (let index = 0; index < this.queue.length && this.active() < this.concurrency; ) {
      const taskId = this.queue[index] as string;
      const record = this.records.get(taskId);
      if (!record || isTerminal(record.status)) {
        this.queue.splice(index, 1);
        this.leaveQueue(taskId);
        continue;
      }
      if (!this.hasToolSlot(record.tool)) {
        index++;
        continue;
      }
      // Over its owner's share: it waits, and the next run of that owner to end drains again.
      const share = this.shares.get(taskId);
      const running = share === undefined ? 0 : this.runningFor(record.owner ?? '');
      if (share !== undefined && running >= share) {
        this.holdForShare(record, running, share);
        index++;
        continue;
      }
      this.queue.splice(index, 1);
      // The share stays with the task until it ends: a retried attempt queues under it again.
      this.heldForShare.delete(taskId);
      void this.run(record);
    }
  }

  private hasToolSlot(tool: string): boolean {
    const limit = this.executor.concurrencyOf?.(tool);
    if (limit === undefined) return true;
    let active = 0;
    for (const running of this.running.values()) if (running.tool === tool) active++;
    return active < limit;
  }

  /** Runs of `owner` that hold a slot (not waiting for an answer), for its fair share. */
  private runningFor(owner: string): number {
    let count = 0;
    for (const [taskId, running] of this.running) if (running.owner === owner && !this.isWaiting(taskId)) count++;
    return count;
  }

  /** Says why the task waits (once per change of the count), and tells the observer once. */
  private holdForShare(record: TaskRecord, running: number, limit: number): void {
    const message = shareQueuedMessage(running);
    if (record.statusMessage !== message) this.write(record, { status: 'working', statusMessage: message });
    if (this.heldForShare.has(record.taskId)) return;
    this.heldForShare.add(record.taskId);
    this.observer.observe({ type: 'waiting', task: factsOf(record), reason: 'principal_share', running, limit });
  }

  private leaveQueue(taskId: string): void {
    this.shares.delete(taskId);
    this.heldForShare.delete(taskId);
  }

  private async run(queued: TaskRecord): Promise<void> {
    const controller = new AbortController();
    this.running.set(queued.taskId, { controller, tool: queued.tool, owner: queued.owner ?? '' });
    const record =
      isQueuedNote(queued.statusMessage) || isRetryMessage(queued.statusMessage)
        ? this.write(queued, { status: 'working', statusMessage: null })
        : queued;
    const attempt = this.attempts.get(record.taskId) ?? 1;
    const trace = this.traces.get(record.taskId);
    this.traces.delete(record.taskId);
    const control: ExecutionControl = {
      signal: controller.signal,
      placement: { worker: PROCESS_NAME, ...(trace && { trace }), ...(attempt > 1 && { resumed: true }) },
      attempt,
      report: (update) => {
        const current = this.records.get(record.taskId);
        const change = current && progressReportChange(current, update);
        if (current && change) this.write(current, change);
      },
      ask: (key, pending) => this.ask(record.taskId, key, pending, controller.signal),
      step: (name, run) => this.step(record.taskId, name, run),
      sleep: (key, durationMs) => this.sleep(record.taskId, key, durationMs, controller.signal),
      callback: async (key, request) => this.callback(record.taskId, key, request, controller.signal),
      spawn: (key, create) => this.spawn(record.taskId, key, create),
      awaitChildren: (children) => this.awaitChildren(record.taskId, children, controller.signal),
    };
    let outcome: Awaited<ReturnType<TaskExecutor['execute']>>;
    try {
      outcome = await this.executor.execute(record, control);
    } catch (error) {
      if (isAttemptFailed(error)) {
        this.running.delete(record.taskId);
        this.retryLater(record.taskId, error.next, error.delayMs, error.message);
        this.drain();
        return;
      }
      // Executors report failures as outcomes; a throw here is a bug in the executor itself.
      outcome = internalErrorOutcome(error);
    } finally {
      this.running.delete(record.taskId);
    }
    this.attempts.delete(record.taskId);
    this.shares.delete(record.taskId);
    const current = this.records.get(record.taskId);
    // Cancelled (or expired) meanwhile: terminal is sticky, the late outcome is dropped.
    if (current && !isTerminal(current.status)) this.write(current, outcomeChange(outcome));
    this.drain();
  }

  /**
   * The task waits `delayMs` for attempt `next`, `working` with `message`, on a timer: its slot
   * goes to the queue meanwhile, and it queues again (behind the tasks already waiting) when
   * the timer fires, unless it ended meanwhile.
   */
  private retryLater(taskId: string, next: number, delayMs: number, message: string): void {
    const current = this.records.get(taskId);
    if (!current || isTerminal(current.status) || this.closed) return;
    this.write(current, { status: 'working', statusMessage: message });
    this.attempts.set(taskId, next);
    const timer = setTimeout(() => {
      this.retryTimers.delete(taskId);
      const waiting = this.records.get(taskId);
      if (!waiting || isTerminal(waiting.status) || this.closed) return;
      this.queue.push(taskId);
      this.drain();
    }, delayMs);
    timer.unref();
    this.retryTimers.set(taskId, timer);
  }

  /** In process the run simply waits: nothing to free, and an answer resumes it in place. */
  private ask(taskId: string, key: string, pending: PendingInput, signal: AbortSignal): Promise<InputAnswer> {
    return new Promise<InputAnswer>((resolve, reject) => {
      const settle = (record: TaskRecord | undefined): boolean => {
        const answer = record?.inputAnswers?.[key];
        if (answer) resolve(answer);
        else if (!record || isTerminal(record.status)) reject(signal.reason ?? new Error(`Task ${taskId} ended`));
        else return false;
        return true;
      };
      const current = this.records.get(taskId);
      if (settle(current) || !current) return;
      const unsubscribe = this.subscribe(({ record }) => {
        if (record.taskId === taskId && settle(record)) stop();
      });
      const onAbort = () => {
        reject(signal.reason);
        stop();
      };
      const stop = () => {
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
        this.waiting.end(taskId);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      // Waiting for a person: its slot goes to the next queued task meanwhile.
      this.waiting.start(taskId, 'input');
      setImmediate(() => this.drain());
      const change = askChange(current, key, pending);
      if (change) this.write(current, change);
    });
  }

  /**
   * In process the run waits out the sleep in place, on a timer (stepped past setTimeout's
   * limit) that the clock's advances also check: its slot goes to the queue meanwhile, and it
   * goes on where it stopped at the wake, as after an answer.
   */
  private async sleep(taskId: string, key: string, durationMs: number, signal: AbortSignal): Promise<void> {
    const current = this.records.get(taskId);
    if (!current || isTerminal(current.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    signal.throwIfAborted();
    const until = plannedWake(current, key, durationMs, this.clock());
    if (until <= this.clock()) return;
    const change = sleepChange(current, key, until);
    if (change) this.write(current, change);
    const task = factsOf(current);
    this.observer.observe({ type: 'parked', task, reason: 'sleep', key, until });
    await new Promise<void>((resolve, reject) => {
      const stop = () => {
        clearTimeout(sleeper.timer);
        signal.removeEventListener('abort', onAbort);
        this.sleeping.delete(taskId);
      };
      const onAbort = () => {
        stop();
        reject(signal.reason);
      };
      const sleeper: Sleeper = {
        until,
        timer: undefined,
        wake: () => {
          stop();
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.sleeping.set(taskId, sleeper);
      this.armSleeper(sleeper);
      // Its slot goes to the next queued task meanwhile.
      setImmediate(() => this.drain());
    });
    this.observer.observe({
      type: 'woke',
      task,
      reason: 'sleep',
      key,
      until,
      lateMs: Math.max(0, this.clock() - until),
    });
    const after = this.records.get(taskId);
    const woke = after && wokeChange(after, until);
    if (after && woke) this.write(after, woke);
  }

  /** Sets the sleeper's timer for the time left by the clock (in steps past setTimeout's limit). */
  private armSleeper(sleeper: Sleeper): void {
    clearTimeout(sleeper.timer);
    const left = sleeper.until - this.clock();
    if (left <= 0) {
      sleeper.wake();
      return;
    }
    sleeper.timer = setTimeout(() => this.armSleeper(sleeper), Math.min(left, MAX_TIMER_MS));
    sleeper.timer.unref();
  }

  /** The clock jumped: sleepers due by now wake, the others set their timers anew. */
  private checkSleepers(): void {
    for (const sleeper of [...this.sleeping.values()]) this.armSleeper(sleeper);
  }

  /** The hook `key`, made and indexed on first use; its wait leaves the slot to the queue. */
  private callback(taskId: string, key: string, request: CallbackRequest, signal: AbortSignal) {
    let current = this.records.get(taskId);
    if (!current || isTerminal(current.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    let state = current.callbacks?.[key];
    if (!state) {
      state = newCallbackState(current, request, this.clock());
      const change = callbackChange(current, key, state);
      if (change) current = this.write(current, change);
    }
    this.callbackIndex.set(callbackTokenHash(state.token), { taskId, key });
    return { id: state.id, token: state.token, wait: () => this.waitForCallback(taskId, key, signal) };
  }

  /** In process the run waits in place, without its slot, until the hook settles or its time comes. */
  private waitForCallback(taskId: string, key: string, signal: AbortSignal): Promise<CallbackResult> {
    return new Promise<CallbackResult>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const check = (record: TaskRecord | undefined): boolean => {
        const settled = settledCallback(record, key);
        if (settled) {
          finish();
          resolve(settled);
        } else if (!record || isTerminal(record.status)) {
          finish();
          reject(signal.reason ?? new Error(`Task ${taskId} ended`));
        } else if (callbackDue(record, key, this.clock())) {
          const name = record.callbacks?.[key]?.name ?? key;
          const change = callbackTimeoutChange(record, key, this.clock());
          // The write's event settles the wait (the subscription below).
          if (change) {
            this.write(record, change);
            this.executor.observe?.({
              type: 'woke',
              task: factsOf(record),
              reason: 'callback',
              name,
              outcome: 'timed_out',
            });
          }
          return settledCallback(this.records.get(taskId), key) !== undefined;
        } else return false;
        return true;
      };
      const recheck = () => {
        if (check(this.records.get(taskId))) return;
        const timeoutAt = this.records.get(taskId)?.callbacks?.[key]?.timeoutAt;
        clearTimeout(timer);
        if (timeoutAt === null || timeoutAt === undefined) return;
        // Real time to the deadline on the runtime's clock; capped so long waits re-arm.
        timer = setTimeout(recheck, Math.min(Math.max(0, timeoutAt - this.clock()), 2_147_483_647));
        timer.unref();
      };
      const unsubscribe = this.subscribe(({ record }) => {
        if (record.taskId === taskId) check(record);
      });
      const onAbort = () => {
        finish();
        reject(signal.reason);
      };
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
        this.callbackWaits.delete(taskId);
        this.waiting.end(taskId);
      };
      const current = this.records.get(taskId);
      if (check(current) || !current) return;
      signal.addEventListener('abort', onAbort, { once: true });
      // Waiting for the outside world: its slot goes to the next queued task meanwhile.
      this.waiting.start(taskId, 'callback');
      this.callbackWaits.set(taskId, recheck);
      setImmediate(() => this.drain());
      const change = callbackWaitChange(current, key);
      if (change) {
        this.write(current, change);
        const name = current.callbacks?.[key]?.name ?? key;
        this.executor.observe?.({ type: 'parked', task: factsOf(current), reason: 'callback', name });
      }
      recheck();
    });
  }

  /** The child under `key`: the recorded one, else a new one, recorded before it is returned. */
  private async spawn(
    taskId: string,
    key: string,
    create: (childCount: number) => Promise<ChildEntry>,
  ): Promise<ChildEntry> {
    const before = this.records.get(taskId);
    const known = before?.children?.[key];
    if (known) return known;
    const entry = await create(Object.keys(before?.children ?? {}).length);
    const current = this.records.get(taskId);
    const change = current && spawnChange(current, key, entry);
    if (current && change) this.write(current, change);
    return entry;
  }

  /**
   * In process the run waits in place for its children, as for an answer: its slot goes to the
   * queue meanwhile (the children may need it), and it shows "n of m subtasks done".
   */
  private awaitChildren(
    taskId: string,
    children: readonly ChildEntry[],
    signal: AbortSignal,
  ): Promise<readonly TaskRecord[]> {
    return new Promise<readonly TaskRecord[]>((resolve, reject) => {
      let waited = false;
      const settle = (): boolean => {
        const parent = this.records.get(taskId);
        if (!parent || isTerminal(parent.status)) {
          reject(signal.reason ?? new Error(`Task ${taskId} ended`));
          return true;
        }
        const records: TaskRecord[] = [];
        for (const child of children) {
          const record = this.liveRecord(child.taskId);
          if (!record) {
            reject(new Error(`Child task ${child.tool} (${child.taskId}) is gone (expired or deleted)`));
            return true;
          }
          if (!isTerminal(record.status)) return false;
          records.push(record);
        }
        if (waited) {
          this.observer.observe({ type: 'woke', task: factsOf(parent), reason: 'children', count: children.length });
        }
        resolve(records);
        return true;
      };
      if (settle()) return;
      waited = true;
      const ids = new Set(children.map((child) => child.taskId));
      const unsubscribe = this.subscribe(({ record }) => {
        if ((ids.has(record.taskId) || record.taskId === taskId) && isTerminal(record.status) && settle()) stop();
      });
      const onAbort = () => {
        reject(signal.reason);
        stop();
      };
      const stop = () => {
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
        this.waiting.end(taskId);
        setImmediate(() => this.drain());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.start(taskId, 'children');
      setImmediate(() => this.drain());
      const parent = this.records.get(taskId) as TaskRecord;
      const message = childrenMessage(parent.children ?? {});
      if (parent.status === 'working' && parent.statusMessage !== message) {
        this.write(parent, { status: 'working', statusMessage: message });
      }
      const done = children.filter((child) => isTerminal(this.records.get(child.taskId)?.status ?? 'working')).length;
      this.observer.observe({
        type: 'parked',
        task: factsOf(parent),
        reason: 'children',
        count: children.length,
        done,
      });
    });
  }

  private async step<T>(taskId: string, name: string, run: () => Promise<T>): Promise<T> {
    const before = this.records.get(taskId);
    if (before?.steps && name in before.steps) return before.steps[name] as T;
    const value = await run();
    const current = this.records.get(taskId);
    const change = current && stepChange(current, name, value);
    if (current && change) this.write(current, change);
    return value;
  }

  private write(record: TaskRecord, change: TaskChange): TaskRecord {
    const next = applyChange(record, change, this.clock());
    this.records.set(next.taskId, next);
    if (isTerminal(next.status)) {
      this.endLife(next);
      this.noteChildEnded(next);
    }
    if (next.ttlMs !== record.ttlMs) this.scheduleExpiry(next);
    this.emit(next, record);
    return next;
  }

  /** A child ended: its parent's entry says so, and a waiting parent's count moves on. */
  private noteChildEnded(child: TaskRecord): void {
    if (!child.parent) return;
    const parent = this.records.get(child.parent.taskId);
    const change = parent && childEndedChange(parent, child);
    if (parent && change) this.write(parent, change);
  }

  private emit(record: TaskRecord, previous?: TaskRecord): void {
    for (const listener of this.listeners) {
      try {
        listener(previous ? { record, previous } : { record });
      } catch {
        // A failing listener must not break the runtime or the other listeners.
      }
    }
  }

  private scheduleExpiry(record: TaskRecord): void {
    clearTimeout(this.expiryTimers.get(record.taskId));
    this.expiryTimers.delete(record.taskId);
    if (record.ttlMs === null) return;
    const delay = Math.max(0, expiresAt(record) - this.clock());
    // setTimeout caps at 2^31-1 ms; longer TTLs are enforced lazily by `get`.
    if (delay > 2_147_483_647) return;
    const timer = setTimeout(() => this.forget(record.taskId, 'expired'), delay);
    timer.unref();
    this.expiryTimers.set(record.taskId, timer);
  }

  private endLife(record: TaskRecord): void {
    const live = this.live.get(liveKey(record));
    if (!live?.delete(record.taskId)) return;
    if (live.size === 0) this.live.delete(liveKey(record));
  }

  /** Drops a task from memory: expiry, or `remove` after stopping it. */
  private forget(taskId: string, why: 'expired' | 'removed' = 'removed'): void {
    const record = this.records.get(taskId);
    if (!record) return;
    this.records.delete(taskId);
    this.traces.delete(taskId);
    this.leaveQueue(taskId);
    this.dropClaim(taskId);
    for (const state of Object.values(record.callbacks ?? {}))
      this.callbackIndex.delete(callbackTokenHash(state.token));
    if (why === 'expired') this.observer.observe({ type: 'expired', task: factsOf(record) });
    clearTimeout(this.expiryTimers.get(taskId));
    this.expiryTimers.delete(taskId);
    clearTimeout(this.retryTimers.get(taskId));
    this.retryTimers.delete(taskId);
    this.attempts.delete(taskId);
    this.running.get(taskId)?.controller.abort(new Error('The task expired'));
    this.endLife(record);
    if (record.owner !== null) {
      const ids = this.owners.get(record.owner);
      const index = ids?.indexOf(taskId) ?? -1;
      if (ids && index >= 0) ids.splice(index, 1);
      if (ids && ids.length === 0) this.owners.delete(record.owner);
    }
  }
}

/** What a task waiting for a free slot says, as on the BullMQ runtime. */
const QUEUED = 'queued';

function isAfter(record: TaskRecord | undefined, position: ListPosition): boolean {
  if (!record) return false;
  return (
    record.createdAt > position.createdAt ||
    (record.createdAt === position.createdAt && record.taskId > position.taskId)
  );
}

/**
 * Whose live-task quota a task counts against: its owner; an anonymous task its address's
 * budget (after a NUL, which no principal holds), else every anonymous caller's ('').
 */
function liveKey(record: TaskRecord): string {
  if (record.owner !== null) return record.owner;
  return record.liveBudget === undefined ? '' : `\u0000${record.liveBudget}`;
}
