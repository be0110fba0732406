/**
 * The BullMQ runtime, server side: stores records in Redis, enqueues one job per task, cancels
 * from any process and relays every record change to local subscribers. Work runs in
 * `TaskWorker`s, in this process (`worker` option) or in any number of others.
 */

import { childEndedChange } from '../../engine/children.js';
import { TaskError } from '../../engine/errors.js';
import { hasOutstandingInput } from '../../engine/inputs.js';
import type {
  CallbackDeliveryResult,
  CreateOptions,
  IdempotencyClaim,
  ListPage,
  ListPosition,
  RuntimeStats,
  TaskListener,
  TaskRuntime,
} from '../../engine/runtime.js';
import { isAsleep } from '../../engine/sleeps.js';
import { isTerminal, type NewTaskRecord, type TaskRecord } from '../../engine/task.js';
import type { TaskChange } from '../../engine/transitions.js';
import { createConsoleLogger } from '../../observe/log.js';
import type { Logger } from '../../observe/logger.js';
import { callbackAddressOf, forgetCallbackTokens } from './callback-index.js';
import {
  asUnavailable,
  closeClient,
  createRedisClient,
  isClusterConnection,
  pingAnyMaster,
  type RedisClient,
  type RedisConnection,
  whenReady,
  withDeadline,
} from './connection.js';
import { TaskEventStream } from './events.js';
import { type JobRetryOptions, type JobShare, shareOf, TaskQueue } from './jobs.js';
import { type RuntimeNames, runtimeNames, shardIndexOf } from './keys.js';
import { countParked, noteUnparked } from './parked-tasks.js';
import { countShareWaiters, SHARE_SCRIPTS } from './principal-shares.js';
import { FoldedInsertRefusedError, RecordFold } from './record-fold.js';
import { checkInserted, DuplicateTaskError, type LiveRoom, RECORD_SCRIPTS, RedisTaskStore } from './record-store.js';
import { RedisSlotLedger } from './slot-ledger.js';
import { QUEUED_MESSAGE, withLostWorker } from './status-mapping.js';
import { countVersionWaiters } from './version-waits.js';
import { TaskWorker, type TaskWorkerSettings } from './worker.js';

/**
 * How long the claim to report a task's expiry is kept: every process following the task reads
 * it gone within about a second of its expiry (or once its Redis connection is back), well
 * within this; the key is a few bytes.
 */
const EXPIRY_REPORT_KEPT_MS = 60 * 60 * 1000;

/** When a create is acknowledged: see `BullmqRuntimeOptions.durability`. */
export type CreateDurability = 'primary' | 'replicated';

/**
 * Options of `BullmqTaskRuntime`. Every server and worker process of an app uses the same
 * `connection`, `prefix`, `queue` and `shards`, or they will not see each other's tasks.
 */
export interface BullmqRuntimeOptions {
  /** A `redis://` URL or ioredis options; the runtime opens its own connections from it. */
  readonly connection: RedisConnection;
  /** BullMQ key prefix, shared by every process of the app (default `mcp`). */
  readonly prefix?: string;
  /** Queue name (default `tasks`). */
  readonly queue?: string;
  /**
   * Queues the app's tasks are spread over (default 1), each in its own Redis Cluster slot, so
   * that several cluster nodes share the load. Every server and worker process of the app must
   * use the same number: a task's shard follows from its id.
   */
  readonly shards?: number;
  /** Longest a create/get/list/cancel waits for Redis before RUNTIME_UNAVAILABLE (default 3000 ms). */
  readonly operationTimeoutMs?: number;
  /**
   * When a create is acknowledged. `'primary'` (default): once the Redis primary stored it;
   * replication is asynchronous, so a primary that dies in the next moment can take the task
   * with it (docs: High availability, the loss window). `'replicated'`: also once at least one
   * replica has it (Redis `WAIT 1`), for one more round trip; a create no replica confirms
   * within `replicaWaitMs` fails with RUNTIME_UNAVAILABLE and is undone.
   */
  readonly durability?: CreateDurability;
  /** How long a `'replicated'` create waits for a replica (default 1000 ms, below `operationTimeoutMs`). */
  readonly replicaWaitMs?: number;
  readonly retry?: JobRetryOptions;
  /** Also run tasks in this process. Omit in a server that leaves all work to worker processes. */
  readonly worker?: TaskWorkerSettings;
  /**
   * How long a lease on a capped slot (a session, a listen stream, a blocking wait) lasts
   * unless this process renews it (default 30 000 ms, at least 1000): the slots of a process
   * that dies come back within it. See `RedisSlotLedger`.
   */
  readonly slotLeaseMs?: number;
  readonly logger?: Logger;
  readonly clock?: () => number;
}

/**
 * The durable runtime: task records in Redis, work as BullMQ jobs, so tasks survive a restart
 * and any number of server and worker processes share them. `createTaskServer` builds it when
 * `redis` is set; construct it yourself to pass as `runtime` with settings of your own. Redis
 * operations that take longer than `operationTimeoutMs` fail with `RUNTIME_UNAVAILABLE`, which a
 * client sees as JSON-RPC -32603.
 */
export class BullmqTaskRuntime implements TaskRuntime {
  readonly kind = 'bullmq';
  readonly durable = true;
  readonly names: RuntimeNames;
  /** The in-process worker, when the `worker` option asked for one. */
  readonly worker: TaskWorker | undefined;
  /** The caps on what callers hold open, counted in Redis across every server process. */
  readonly slots: RedisSlotLedger;

  private readonly client: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly store: RedisTaskStore;
  /** One per shard, by shard index. */
  private readonly queues: readonly TaskQueue[];
  private readonly events: TaskEventStream;
  private readonly logger: Logger;
  private readonly operationTimeoutMs: number;
  private readonly replicaWaitMs: number | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: BullmqRuntimeOptions) {
    this.names = runtimeNames(options.prefix, options.queue, options.shards);
    this.logger = options.logger ?? createConsoleLogger();
    this.operationTimeoutMs = options.operationTimeoutMs ?? 3000;
    if (options.durability === 'replicated') {
      const waitMs = options.replicaWaitMs ?? Math.min(1000, Math.floor(this.operationTimeoutMs / 2));
      if (!Number.isInteger(waitMs) || waitMs < 1 || waitMs >= this.operationTimeoutMs) {
        throw new RangeError(
          `replicaWaitMs must be a whole number of milliseconds from 1 to below operationTimeoutMs (${this.operationTimeoutMs}), got ${waitMs}`,
        );
      }
      this.replicaWaitMs = waitMs;
    }
    this.client = createRedisClient(options.connection, 'request', this.logger, `${this.names.queue}:runtime`);
    this.subscriber = createRedisClient(options.connection, 'subscriber', this.logger, `${this.names.queue}:events`);
    this.store = new RedisTaskStore(this.client, this.names, options.clock);
    const retry = { attempts: options.retry?.attempts ?? 3, backoffMs: options.retry?.backoffMs ?? 1000 };
    const fold = new RecordFold(this.client, { ...RECORD_SCRIPTS, ...SHARE_SCRIPTS });
    // On one Redis with one shard a job's share goes into its hash, for its worker to take the
    // slot as it activates the job. Not with several shards: a worker then activates up to its
    // concurrency on every shard (worker.ts), so slots taken at activation would be held by jobs
    // waiting in the process for a slot of its own, and an owner's share filled by jobs that do
    // not run (measured: 3 shards on one Redis at half the throughput of 1, bench/scale.ts).
    // There the worker takes the slot once the job has the process's slot, as on a cluster.
    const takesAtActivation = !isClusterConnection(options.connection) && this.names.shards.length === 1;
    const shareFieldNames = takesAtActivation ? this.names.shares : undefined;
    this.queues = this.names.shards.map(
      (shard) => new TaskQueue(this.client, this.names.prefix, shard, retry, fold, shareFieldNames),
    );
    this.events = new TaskEventStream(this.subscriber, this.names.eventsChannel, this.logger);
    this.slots = new RedisSlotLedger(this.client, this.names, {
      ...(options.slotLeaseMs !== undefined && { leaseMs: options.slotLeaseMs }),
      operationTimeoutMs: this.operationTimeoutMs,
      logger: this.logger,
    });
    this.worker = options.worker
      ? new TaskWorker({
          ...options.worker,
          connection: options.connection,
          prefix: this.names.prefix,
          queue: this.names.queue,
          shards: this.names.shards.length,
          logger: options.worker.logger ?? this.logger,
          ...(options.clock && { clock: options.clock }),
        })
      : undefined;
  }

  /**
   * Record and job in one script: one command, and no job exists without its record (a refused
   * record adds no job; see record-fold.ts). A failure whose outcome is unknown (Redis gone
   * mid-call, the deadline passed) undoes what it can; what it cannot leaves a record that says
   * `queued` until its TTL removes it.
   */
  async create(record: NewTaskRecord, options: CreateOptions = {}): Promise<TaskRecord> {
    return this.guard(this.onShard('create a task', record.taskId), async (signal) => {
      const stored: TaskRecord = { ...record, statusMessage: record.statusMessage ?? QUEUED_MESSAGE };
      const claim = options.idempotency;
      // With several shards the quota is taken on the owner's home shard first (one round
      // trip); inside `insert` it would let the job overtake the record.
      let room: LiveRoom | undefined;
      try {
        room = await this.store.roomFor(stored, options.maxLiveForOwner);
      } catch (error) {
        // Over the quota on the other shards, a repeat still gets its first task: it creates nothing.
        const heldBy = claim && (await this.store.holderOf(stored, claim));
        const existing = heldBy && (await this.readHolder(heldBy));
        if (existing) return existing;
        throw error;
      }
      const share = options.maxRunningForOwner === undefined ? undefined : shareOf(stored, options.maxRunningForOwner);
      const { recordError, holder } = await this.sendRecordAndJob(stored, room, claim, share);
      if (recordError !== undefined) {
        // A refused insert added no job; any other failure may have left one to remove.
        if (!isRefusal(recordError)) void this.undoCreate(stored);
        else await this.store.releaseRoom(stored, room);
        throw recordError;
      }
      if (holder !== undefined) {
        // The claim is held: nothing was stored and the job insert behind was dropped.
        await this.store.releaseRoom(stored, room);
        const existing = await this.readHolder(holder);
        if (existing) return existing;
        throw new TaskError('RUNTIME_UNAVAILABLE', 'The task holding this idempotency key ended as it was read; retry');
      }
      if (signal.aborted) {
        // The caller was told it failed, by the deadline: nothing may run.
        void this.undoCreate(stored);
        throw signal.reason;
      }
      if (this.replicaWaitMs !== undefined) await this.untilReplicated(stored, signal);
      return stored;
    });
  }

  /**
   * `WAIT 1` on the connection that wrote the task: Redis answers once a replica has every
   * write made on it so far. On a cluster the pipeline's one keyed command sends it to the
   * shard's primary (the keyless `WAIT` follows it there). No replica in time: the caller is
   * told the create failed, so the task is undone.
   */
  private async untilReplicated(record: TaskRecord, signal: AbortSignal): Promise<void> {
    const replies = await this.client
      .pipeline()
      .exists(this.names.record(record.taskId))
      .call('WAIT', '1', String(this.replicaWaitMs))
      .exec();
    const [, [waitError, replicas] = [null, 0]] = replies ?? [];
    if (waitError || Number(replicas) < 1 || signal.aborted) {
      void this.undoCreate(record);
      throw (
        signal.reason ??
        new TaskError(
          'RUNTIME_UNAVAILABLE',
          `No Redis replica confirmed the task within ${this.replicaWaitMs} ms (durability: replicated)${
            waitError ? `: ${waitError.message}` : ''
          }; it was not created`,
        )
      );
    }
  }

  /** The task holding an idempotency claim, read as `get` reads it (a lost worker says so). */
  private async readHolder(taskId: string): Promise<TaskRecord | undefined> {
    const read = await this.store.readWithLock(taskId);
    return read && withLostWorker(read.record, read.lockHeld);
  }

  /**
   * An id drawn until its shard is the claim's: the claim key and the record then share a
   * slot, and `INSERT` checks and takes the claim atomically with storing the record. Each draw
   * lands on the right shard with probability 1/shards.
   */
  idForClaim(claim: string, draw: () => string): string {
    const shards = this.names.shards.length;
    if (shards === 1) return draw();
    const wanted = shardIndexOf(claim, shards);
    for (;;) {
      const taskId = draw();
      if (shardIndexOf(taskId, shards) === wanted) return taskId;
    }
  }

  /**
   * The record and the job in one script (record-fold.ts): atomic for any id, a fresh random
   * one or one a client chose. A refusal (the id is taken, the quota is used up, the claim is
   * held) added no job; any other failure may or may not have stored both.
   */
  private async sendRecordAndJob(
    record: TaskRecord,
    room: LiveRoom | undefined,
    claim: IdempotencyClaim | undefined,
    share: JobShare | undefined,
  ): Promise<{ recordError?: unknown; holder?: string }> {
    try {
      await this.queueOf(record.taskId).enqueue(record, this.store.insertCommand(record, room, claim), share);
      return {};
    } catch (error) {
      if (!(error instanceof FoldedInsertRefusedError)) return { recordError: error };
      try {
        const inserted = checkInserted(error.reply, record, room);
        return inserted.stored ? {} : { holder: inserted.holder };
      } catch (refusal) {
        return { recordError: refusal };
      }
    }
  }

  /** The record; while its running job's lock has lapsed (its worker died), it says so. */
  async get(taskId: string): Promise<TaskRecord | undefined> {
    return this.guard(this.onShard('read a task', taskId), async () => {
      const read = await this.store.readWithLock(taskId);
      return read && withLostWorker(read.record, read.lockHeld);
    });
  }

  async list(owner: string, limit: number, after?: ListPosition): Promise<ListPage> {
    return this.guard('list tasks', () => this.store.list(owner, limit, after));
  }

  /**
   * The record turns `cancelled` first (the durable fact every worker checks before running),
   * and the same Redis script tells the workers, so the one running the task aborts it. A job
   * still waiting is then removed so it never takes a worker slot.
   */
  async cancel(taskId: string, statusMessage: string): Promise<TaskRecord | undefined> {
    return this.guard(this.onShard('cancel a task', taskId), async () => {
      const result = await this.store.update(
        taskId,
        (current) => (isTerminal(current.status) ? undefined : { status: 'cancelled', statusMessage }),
        { channel: this.names.cancelChannel, message: taskId },
      );
      if (result?.changed) {
        const parent = result.record.parent;
        if (parent) {
          // The parent's count of ended children moves on (see `childEndedChange`).
          await this.store.update(parent.taskId, (current) => childEndedChange(current, result.record));
        }
        try {
          // A parked (sleeping) job goes with it: it never runs the method again.
          await Promise.all([
            this.queueOf(taskId).removeUnlessRunning(taskId),
            noteUnparked(this.client, this.names, taskId),
          ]);
        } catch (error) {
          // Not needed for correctness: a worker that takes the job finds the record cancelled.
          this.logger.warn('Could not remove the job of a cancelled task', { taskId, error: String(error) });
        }
      }
      return result?.record;
    });
  }

  /** Stops the task as `cancel` does, then deletes its record and its entry in the owner's list. */
  async remove(taskId: string): Promise<boolean> {
    const stopped = await this.cancel(taskId, 'deleted by client');
    if (!stopped) return false;
    return this.guard(this.onShard('delete a task', taskId), async () => {
      // Its callback tokens go with it: the index has no other end than the record's.
      await Promise.all([this.store.discard(stopped), forgetCallbackTokens(this.client, this.names, stopped)]);
      return true;
    });
  }

  /**
   * Answers are written (and announced to workers holding a run open) in one script; once no
   * question is outstanding, the parked job is promoted so a worker runs the method again.
   */
  async answer(
    taskId: string,
    decide: (current: TaskRecord) => TaskChange | undefined,
  ): Promise<TaskRecord | undefined> {
    return this.guard(this.onShard('answer a task', taskId), async () => {
      const result = await this.store.update(taskId, decide, { channel: this.names.answersChannel, message: taskId });
      // Also when this call changed nothing but the task has had answers: if waking the job
      // failed after an earlier call stored the last one, the client's retry must still wake it
      // (resume is idempotent). A task that never asked is not woken: its delay is a retry's.
      const answered = result && Object.keys(result.record.inputAnswers ?? {}).length > 0;
      // A task asleep stays asleep: its job wakes at the sleep's end.
      if (
        result &&
        answered &&
        result.record.status === 'working' &&
        !hasOutstandingInput(result.record) &&
        !isAsleep(result.record, Date.now())
      ) {
        await this.queueOf(taskId).resume(taskId);
      }
      return result?.record;
    });
  }

  /**
   * The token's digest names the task and key; the change is one compare-and-set script on the
   * record (so of two racing POSTs exactly one settles the hook), announced to a worker holding
   * the run open, and the parked job is promoted so any worker runs the method again.
   */
  async deliverCallback(
    token: string,
    decide: (current: TaskRecord, key: string) => TaskChange | undefined,
  ): Promise<CallbackDeliveryResult | undefined> {
    return this.guard('deliver a callback', async () => {
      const address = await callbackAddressOf(this.client, this.names, token);
      if (!address) return undefined;
      const { taskId, key } = address;
      const result = await this.store.update(taskId, (current) => decide(current, key), {
        channel: this.names.answersChannel,
        message: taskId,
      });
      if (!result) return undefined;
      if (result.changed) {
        await this.client.zrem(this.names.parked('callback'), taskId);
        await this.queueOf(taskId).resume(taskId);
      }
      return { record: result.record, key, changed: result.changed };
    });
  }

  subscribe(listener: TaskListener, onGap?: () => void): () => void {
    return this.events.subscribe(listener, onGap);
  }

  /** The job id is the task id (see `TaskQueue`). */
  jobIdOf(taskId: string): string {
    return taskId;
  }

  /** One SET NX per task: the process that sets it reports the expiry, the others stay quiet. */
  async claimExpiryReport(taskId: string): Promise<boolean> {
    const claimed = await this.guard('claim an expiry report', () =>
      this.client.set(this.names.shardOf(taskId).expiryReport(taskId), '1', 'PX', EXPIRY_REPORT_KEPT_MS, 'NX'),
    );
    return claimed === 'OK';
  }

  /**
   * Redis answers a PING within the operation deadline. On a cluster, one master answering is
   * enough (each is asked, the first answer wins): a master that is down makes its shards fail
   * on their own, and pulling every server out of service for it would stop the shards that
   * still work.
   */
  async checkReady(): Promise<void> {
    await this.guard('check Redis', () => pingAnyMaster(this.client));
  }

  /**
   * The queues' own counts (three cheap Redis calls per shard), summed: waiting and active jobs
   * are `working` tasks; delayed jobs are tasks parked for answers or a sleep, or waiting for a
   * retry. Parked tasks by reason are one ZCOUNT each (see parked-tasks.ts). A shard that does
   * not answer (its master is lost) is left out of the sums and named in `unavailableShards`;
   * the stats fail only when no shard answers.
   */
  async stats(): Promise<RuntimeStats> {
    const [perShard, shareCounts, versionCounts, [parked]] = await this.guard('count jobs', () =>
      Promise.all([
        Promise.allSettled(this.queues.map((queue) => queue.counts())),
        countShareWaiters(this.client, this.names, Date.now()),
        countVersionWaiters(this.client, this.names, Date.now()),
        // One slot of its own (`{<queue>.parked}`): left out when its master is lost.
        Promise.allSettled([countParked(this.client, this.names, Date.now())]),
      ]),
    );
    const unavailable = new Set<string>();
    const queue = { waiting: 0, active: 0, delayed: 0 };
    let children = 0;
    for (const [index, counts] of perShard.entries()) {
      if (counts.status === 'rejected') {
        unavailable.add(this.names.shards[index]?.queue as string);
        continue;
      }
      queue.waiting += counts.value.waiting;
      queue.active += counts.value.active;
      queue.delayed += counts.value.delayed;
      children += counts.value['waiting-children'];
    }
    if (unavailable.size === perShard.length) {
      const first = perShard[0] as PromiseRejectedResult;
      throw asUnavailable(first.reason, 'count jobs');
    }
    const sum = (counts: PromiseSettledResult<number>[], shardOf: (index: number) => string) =>
      counts.reduce((total, count, index) => {
        if (count.status === 'fulfilled') return total + count.value;
        unavailable.add(shardOf(index));
        return total;
      }, 0);
    const shardName = (index: number) => this.names.shards[index]?.queue as string;
    // One shard: the share and version keys have slots of their own.
    const single = this.names.shards.length === 1;
    const principalShare = sum(shareCounts, (index) => (single ? `${this.names.queue}.shares` : shardName(index)));
    const version = sum(versionCounts, (index) => (single ? `${this.names.queue}.versions` : shardName(index)));
    return {
      queue,
      waiting: { principal_share: principalShare, version },
      // Parents wait in BullMQ's waiting-children set, not in a parked set of ours.
      ...(parked.status === 'fulfilled' && { parked: { ...parked.value, children } }),
      ...(unavailable.size > 0 && { unavailableShards: [...unavailable].sort() }),
    };
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.worker?.close();
      await this.slots.close();
      await Promise.all(this.queues.map((queue) => queue.close().catch(() => {})));
      await this.events.close();
      await Promise.all([closeClient(this.subscriber), closeClient(this.client)]);
    })();
    return this.closing;
  }

  /**
   * Every operation waits for the request connection and for the event subscription (so a
   * caller that subscribes and then reads cannot miss a change), all under one deadline.
   */
  private guard<T>(what: string, operation: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new TaskError('RUNTIME_UNAVAILABLE', 'The BullMQ task runtime is closed'));
    return withDeadline(what, this.operationTimeoutMs, async (signal) => {
      await whenReady(this.client, signal);
      await this.events.ready;
      signal.throwIfAborted();
      return operation(signal);
    });
  }

  private queueOf(taskId: string): TaskQueue {
    return this.queues[this.names.shardOf(taskId).index] as TaskQueue;
  }

  /** What an operation does, naming the shard when there are several: an outage may hit one only. */
  private onShard(what: string, taskId: string): string {
    if (this.names.shards.length === 1) return what;
    return `${what} on shard ${this.names.shardOf(taskId).queue}`;
  }

  /** Both halves independently: whichever failed to be created, the other must still go. */
  private async undoCreate(record: TaskRecord): Promise<void> {
    const results = await Promise.allSettled([
      withDeadline('discard a half-created task', this.operationTimeoutMs, () => this.store.discard(record)),
      withDeadline('remove the job of a half-created task', this.operationTimeoutMs, () =>
        this.queueOf(record.taskId).removeUnlessRunning(record.taskId),
      ),
    ]);
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
    if (failures.length > 0) {
      this.logger.warn('A half-created task is left to expire by itself', { taskId: record.taskId, failures });
    }
  }
}

/** The insert said no (the id is taken, or the quota is used up): nothing was created. */
function isRefusal(error: unknown): boolean {
  return error instanceof DuplicateTaskError || (error instanceof TaskError && error.code === 'LIMIT_EXCEEDED');
}
