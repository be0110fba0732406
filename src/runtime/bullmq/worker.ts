/**
 * Runs task jobs with a `TaskExecutor` (the app's tools). Any number of processes may run a
 * `TaskWorker` on the same prefix and queue; each:
 *
 * - starts a fresh job from the record snapshot it carries (no read: see jobs.ts), and reads the
 *   record before any other run, skipping a task that is gone or already ended;
 * - turns progress into `statusMessage` and writes the outcome with `outcomeChange` (a late
 *   outcome after a cancel is dropped by the state machine);
 * - aborts a running method when any process cancels its task (pub/sub on the cancel channel);
 * - writes what BullMQ decides about failed attempts: a retry message, or the final failure,
 *   including "the worker was lost" for a job that stalled too often. The worker that detects
 *   it is alive by definition, so that failure always reaches the record.
 */
import type { Job, Worker } from 'bullmq';
import {
  type CallbackRequest,
  type CallbackResult,
  callbackChange,
  callbackDue,
  callbackTimeoutChange,
  callbackWaitChange,
  hasPendingCallback,
  newCallbackState,
  settledCallback,
} from '../../engine/callbacks.js';
import {
  CANCELLED_WITH_PARENT,
  type ChildEntry,
  ChildrenPaused,
  childEndedChange,
  childrenMessage,
  spawnChange,
  unfinishedChildren,
} from '../../engine/children.js';
import { type AttemptFailed, type DurableWait, isAttemptFailed, TaskPaused } from '../../engine/errors.js';
import { shareQueuedMessage } from '../../engine/fair-share.js';
import { askChange, hasOutstandingInput, stepChange } from '../../engine/inputs.js';
import { factsOf, PROCESS_NAME } from '../../engine/lifecycle.js';
import { internalErrorOutcome } from '../../engine/outcomes.js';
import type { ExecutionControl, RuntimeCallback, TaskExecutor } from '../../engine/runtime.js';
import { plannedWake, sleepChange, wokeChange } from '../../engine/sleeps.js';
import {
  expiresAt,
  type InputAnswer,
  isTerminal,
  type PendingInput,
  type TaskOutcome,
  type TaskRecord,
  type TaskStatus,
} from '../../engine/task.js';
import { outcomeChange } from '../../engine/transitions.js';
import {
  checkVersionWaitMs,
  DEFAULT_VERSION_WAIT_MS,
  versionChangedOutcome,
  versionWaitMessage,
} from '../../engine/version-pin.js';
import { createConsoleLogger } from '../../observe/log.js';
import type { Logger } from '../../observe/logger.js';
import { limitRepeats } from '../../observe/repeat-limiter.js';
import { forgetCallbackTokens, indexCallbackToken } from './callback-index.js';
import {
  closeClient,
  createRedisClient,
  isClusterConnection,
  pingAnyMaster,
  type RedisClient,
  type RedisConnection,
  withDeadline,
} from './connection.js';
import { RedisChannelSubscription } from './events.js';
import { type JobShare, type ParkedJob, type TaskJobData, withoutStart } from './jobs.js';
import { type RuntimeNames, runtimeNames, type ShardNames } from './keys.js';
import { bullmqLibrary } from './libraries.js';
import { guardsOverlappingRuns, onRunSettled, overlapSafeWorker } from './overlap-safe-worker.js';
import { noteParked, noteUnparked } from './parked-tasks.js';
import {
  PrincipalShares,
  promoteIfDelayed,
  SHARE_RECHECK_MS,
  SHARE_SCRIPTS,
  type ShareSlot,
  type ShareTurn,
} from './principal-shares.js';
import { ProgressWriter } from './progress-writer.js';
import { RecordFold } from './record-fold.js';
import { RECORD_SCRIPTS, RedisTaskStore, type StoredRecord } from './record-store.js';
import { ShardQueues } from './shard-queues.js';
import { knowsLoopOf, ShardTakes } from './shard-takes.js';
import {
  finalFailureOutcome,
  isRuntimeNote,
  REQUEUED_AFTER_SHUTDOWN_MESSAGE,
  REQUEUED_AFTER_STALL_MESSAGE,
  requeuedChange,
  retryChange,
  startedChange,
} from './status-mapping.js';
import { ToolSlots } from './tool-slots.js';
import { VERSION_RECHECK_MS, VERSION_SCAN_MS, VersionWaits } from './version-waits.js';

/** What an app chooses about its workers; where Redis is comes with `TaskWorkerOptions`. */
export interface TaskWorkerSettings {
  readonly executor: TaskExecutor;
  /**
   * Jobs this process runs at once (default 8), whatever the number of shards it consumes. With
   * several, each shard's BullMQ worker may take its own jobs plus the slots free (at least 1,
   * shard-takes.ts), and a job taken while the process runs as many waits in the process
   * (`queued`, holding its lock) for a run to end: a fixed split of the slots between shards
   * would let the runs on one shard (one principal's fair share, say) stop its other jobs while
   * the process still has room.
   */
  readonly concurrency?: number;
  /**
   * The shards (0-based) this process takes jobs from (default: all). Every shard needs some
   * worker; giving each process a subset lets a fleet keep its connections per node low.
   */
  readonly consumeShards?: readonly number[];
  /**
   * How long a job's lock lives without renewal (default 8000 ms; renewed every half of it). A
   * worker that stops renewing (killed, or its event loop blocked longer than this) loses the
   * job to another, which runs it again from the top. Shorter finds lost workers sooner; longer
   * tolerates longer event-loop stalls. Use the same value in every process (docs/design/bullmq.md §2).
   */
  readonly lockDurationMs?: number;
  /**
   * How often some worker looks for jobs of lost workers (default 3000 ms; same in every
   * process). A lost worker's job is back in the queue within about `lockDurationMs +
   * stalledIntervalMs` (11 s by default; one interval more when several workers take turns).
   */
  readonly stalledIntervalMs?: number;
  /** Lost workers a job survives before its task fails (default 1). */
  readonly maxStalledCount?: number;
  /**
   * On `close()`, how long running methods may take to finish (default 10 000 ms). After that
   * they are aborted and their jobs go back to the queue for another worker.
   */
  readonly shutdownGraceMs?: number;
  /**
   * How long a method that asked a question keeps its slot waiting for the answer (default
   * 2000 ms). Quick answers resume it in place; after that the job is parked, frees the slot,
   * and runs again from the top (replaying answers and steps) when answered.
   */
  readonly inputGraceMs?: number;
  /**
   * How long a resumed task (after an answered question, a retry's back-off, a lost worker)
   * waits for a worker whose tool has the version it started with, when this worker's differs
   * (default 10 minutes; env `MCP_TASK_VERSION_WAIT_MS`). Meanwhile the job waits delayed,
   * holding no slot; after it the task fails and must be started again.
   */
  readonly versionWaitMs?: number;
  /**
   * How long a worker that took a job whose task record it cannot find looks again for it, with
   * back-off, before it fails the job as an orphan (default 5000 ms): the record's write may
   * still be in flight (on a cluster, a redirect during resharding can reorder it behind the
   * job). Counted on `mcp_task_orphan_jobs_total` and logged (`orphaned`).
   */
  readonly orphanWaitMs?: number;
  readonly logger?: Logger;
}

export interface TaskWorkerOptions extends TaskWorkerSettings {
  readonly connection: RedisConnection;
  readonly prefix?: string;
  readonly queue?: string;
  /** The app's shard count; the same in every process (see `BullmqRuntimeOptions.shards`). */
  readonly shards?: number;
  readonly clock?: () => number;
  /** Runs once the worker has closed (what its owner opened next to it, such as the runtime children are created through). */
  readonly onClosed?: () => Promise<void>;
}

/** Lost-worker detection: a SIGKILLed worker's job runs again within ~11 s (see the settings). */
export const DEFAULT_LOCK_DURATION_MS = 8000;
export const DEFAULT_STALLED_INTERVAL_MS = 3000;

/**
 * Longest a worker waits for Redis in a step that may touch another shard than the job's (the
 * owner's home for fair shares, every shard for the version scan). The worker's connection
 * waits out outages, so without it a lost master would hold slots of jobs on healthy shards.
 * Generous, so that a loaded process (whose timers fire before it reads replies that came
 * meanwhile) does not take a slow answer for a lost master.
 */
const CROSS_SHARD_DEADLINE_MS = 10_000;
/** An orphan's first look again; each next one waits twice as long. */
const ORPHAN_FIRST_LOOK_MS = 50;
/** Default of `orphanWaitMs`. */
export const DEFAULT_ORPHAN_WAIT_MS = 5000;
/** How often a task whose fair share cannot be read looks again. */
const SHARE_STORE_RECHECK_MS = 5000;

/** How long to wait for methods that ignore the shutdown abort before leaving them to stall recovery. */
const ABORTED_METHODS_GRACE_MS = 2000;

interface RunningTask {
  readonly controller: AbortController;
  /** The newest version of the record this run knows (read or written), to write the outcome against. */
  known?: StoredRecord;
  /** Aborted because this worker shuts down (the job goes back to the queue), not by a cancel. */
  shuttingDown: boolean;
  /** A question went unanswered past the grace period (or a sleep is long): the run must end in a park. */
  paused: boolean;
  /**
   * What the park waits for when it is not an answer (a sleep, a callback), until when, and its
   * key; `ready` tells whether a fresh record lets it resume at once (a callback that settled
   * while the job was still active).
   */
  wait?: DurableWait & {
    readonly until: number;
    readonly key: string;
    readonly ready?: (fresh: TaskRecord) => boolean;
  };
  /** The method awaits children that have not all ended: the run must end in waiting-children. */
  waitingChildren?: { readonly count: number; readonly done: number };
  /** The run spawned a child (so its end must look for unfinished children). */
  spawned?: boolean;
}

/** How long a run shows the runtime's note (`queued`, ...) before it is cleared for progress. */
const STARTED_NOTE_DELAY_MS = 100;

/**
 * How long a cancel heard for a task this process is not running is remembered. Its message
 * and the job can reach this process in either order (separate connections), so a job that
 * starts just after its cancel was heard must still find out; milliseconds would do.
 */
const RECENT_CANCEL_MS = 60_000;
/** At most this many remembered cancels; the oldest go first. */
const MAX_RECENT_CANCELS = 10_000;

/** A parked job with no TTL to bound it still wakes up some day, finds no answer, and parks again. */
const MAX_PARK_MS = 365 * 24 * 3600 * 1000;

/**
 * A BullMQ worker that runs tasks from the app's queue (every shard unless told otherwise):
 * made by `createTaskWorker`, or inside a server by `BullmqTaskRuntime`'s `worker` option. A
 * worker killed mid-run loses its lock, and another worker runs the task again once the stall is
 * noticed; `close()` stops taking jobs and hands unfinished ones back.
 */
export class TaskWorker {
  readonly names: RuntimeNames;
  /** Resolves once the worker listens for cancels and takes jobs. */
  readonly started: Promise<void>;

  private readonly executor: TaskExecutor;
  private readonly logger: Logger;
  private readonly shutdownGraceMs: number;
  private readonly client: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly store: RedisTaskStore;
  /** Writes each outcome in the command that completes its job (record-fold.ts). */
  private readonly fold: RecordFold;
  /**
   * Whether a run's fair-share slot is taken in the script that activates its job and freed
   * in the script that completes it: on one Redis, not on a cluster (where the share's keys
   * are in a slot of their own, and each is a command of its own).
   */
  private readonly foldsShares: boolean;
  private readonly cancels: RedisChannelSubscription;
  private readonly answers: RedisChannelSubscription;
  /** Runs holding their slot for an answer, by task id. */
  private readonly answerWaiters = new Map<string, Set<() => void>>();
  private readonly inputGraceMs: number;
  private readonly clock: () => number;
  /** One BullMQ worker per consumed shard. */
  private readonly workers: readonly Worker<TaskJobData, void>[];
  private readonly slots: ToolSlots;
  /**
   * Caps the process at `concurrency` when it consumes several shards: a job a shard's worker
   * took beyond the cap (`takes` keeps those few) keeps its lock and waits here, as for a
   * tool's own limit.
   */
  private readonly processSlots: ToolSlots | undefined;
  /** How many jobs each shard's worker may take, when there are several (shard-takes.ts). */
  private readonly takes: ShardTakes | undefined;
  private readonly running = new Map<string, RunningTask>();
  private readonly shares: PrincipalShares;
  private readonly versionWaits: VersionWaits;
  private readonly versionWaitMs: number;
  private readonly orphanWaitMs: number;
  /** The version of each tool this process runs; empty when the executor does not say. */
  private readonly versions: ReadonlyMap<string, string>;
  private versionScan: NodeJS.Timeout | undefined;
  /** The version scan runs every second: through an outage its warning is written once a window. */
  private readonly scanLog: Logger;
  /** Cancels heard for tasks not running here, by task id, with when (insertion order = age). */
  private readonly recentCancels = new Map<string, number>();
  /** Record writes made from BullMQ event handlers; `close` waits for them. */
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  /** Queue handles to reach child jobs by id (their dependency on a parent that ended). */
  private readonly childQueues: ShardQueues;
  private readonly onClosed: (() => Promise<void>) | undefined;

  constructor(options: TaskWorkerOptions) {
    this.names = runtimeNames(options.prefix, options.queue, options.shards);
    const consumed = consumedShards(this.names, options.consumeShards);
    this.executor = options.executor;
    this.logger = options.logger ?? createConsoleLogger();
    this.shutdownGraceMs = options.shutdownGraceMs ?? 10_000;
    this.client = createRedisClient(options.connection, 'worker', this.logger, `${this.names.queue}:worker`);
    this.subscriber = createRedisClient(options.connection, 'subscriber', this.logger, `${this.names.queue}:cancels`);
    this.clock = options.clock ?? Date.now;
    this.store = new RedisTaskStore(this.client, this.names, this.clock);
    this.foldsShares = !isClusterConnection(options.connection);
    this.fold = new RecordFold(
      this.client,
      { ...RECORD_SCRIPTS, ...SHARE_SCRIPTS },
      this.clock,
      this.foldsShares ? { bases: this.names.shares.bases } : undefined,
    );
    this.childQueues = new ShardQueues(this.client, this.names);
    this.onClosed = options.onClosed;
    this.slots = new ToolSlots((tool) => this.executor.concurrencyOf?.(tool));
    this.shares = new PrincipalShares(this.client, this.names, this.clock, (error) =>
      this.logger.warn('Could not renew a fair-share slot', { error: String(error) }),
    );
    this.cancels = new RedisChannelSubscription(this.subscriber, this.names.cancelChannel, (taskId) => {
      // Every worker process hears every cancel; only the one running the task has it here, or
      // is about to (its job is on the way): see `abortIfCancelled`.
      const run = this.running.get(taskId);
      if (run) run.controller.abort(new Error('The task was cancelled'));
      else this.rememberCancel(taskId);
    });
    this.inputGraceMs = options.inputGraceMs ?? 2000;
    this.versionWaitMs = checkVersionWaitMs(options.versionWaitMs ?? DEFAULT_VERSION_WAIT_MS);
    this.orphanWaitMs = options.orphanWaitMs ?? DEFAULT_ORPHAN_WAIT_MS;
    if (!Number.isFinite(this.orphanWaitMs) || this.orphanWaitMs < 0) {
      throw new RangeError(`orphanWaitMs must be a number of 0 or more, got ${String(options.orphanWaitMs)}`);
    }
    this.versions = this.executor.toolVersions?.() ?? new Map();
    this.versionWaits = new VersionWaits(this.client, this.names, this.clock);
    this.scanLog = limitRepeats(this.logger);
    this.answers = new RedisChannelSubscription(this.subscriber, this.names.answersChannel, (taskId) => {
      for (const wake of this.answerWaiters.get(taskId) ?? []) wake();
    });

    // BullMQ creates the job's AbortSignal only for a processor declaring three parameters.
    const processor = (job: Job<TaskJobData, void>, token: string | undefined, signal: AbortSignal | undefined) => {
      const run = this.process(job, token, signal);
      return this.takes ? run.finally(() => this.takes?.runEnded(job)) : run;
    };
    const lockDuration = options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS;
    const concurrency = options.concurrency ?? 8;
    checkConcurrency(concurrency);
    this.processSlots = consumed.length > 1 ? new ToolSlots(() => concurrency) : undefined;
    this.workers = consumed.map((shard, index) => {
      const worker = new (overlapSafeWorker())<TaskJobData, void>(
        shard.queue,
        processor,
        {
          connection: this.client,
          prefix: this.names.prefix,
          concurrency,
          autorun: false,
          lockDuration,
          stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
          maxStalledCount: options.maxStalledCount ?? 1,
        },
        this.fold.backendFactory,
      );
      this.listenTo(worker, shard);
      if (consumed.length > 1) {
        worker.on('active', (job) => this.takes?.taken(index, job));
        worker.on('drained', () => this.takes?.drained(index));
        onRunSettled(worker, (job) => this.takes?.settled(index, job));
      }
      return worker;
    });
    const takesFit = this.workers.every(knowsLoopOf);
    this.takes = consumed.length > 1 && takesFit ? new ShardTakes(concurrency, this.workers) : undefined;
    if (consumed.length > 1 && !takesFit) {
      this.logger.warn(
        "BullMQ's worker has no mainLoopQueue, waiting or drained field (not the BullMQ release this package pins?): " +
          "each shard's worker takes up to the whole concurrency, and jobs beyond it wait in the process",
      );
    }
    // Once for all shards: the workers are of one class, on one BullMQ.
    if (!this.workers.every(guardsOverlappingRuns)) {
      this.logger.warn(
        "BullMQ's lock manager has no trackedJobs map (not the BullMQ release this package pins?): a job this " +
          'worker takes again while its parking run unwinds loses its lock renewal and may run twice',
      );
    }

    // Take jobs only once cancels can reach us, or a cancel could slip past a job we just started.
    this.started = Promise.all([this.cancels.ready, this.answers.ready]).then(() => {
      if (this.closing) return;
      for (const worker of this.workers) {
        worker.run().catch((error: unknown) => this.logger.error('Task worker stopped', { error: String(error) }));
      }
      this.wakeVersionWaiters();
    });
    this.started.catch(() => {});
  }

  /** Resolves when this worker can take jobs: it has started, is not closing, and Redis answers. */
  async checkReady(): Promise<void> {
    if (this.closing) throw new Error('the worker is shutting down');
    await withDeadline('check Redis', 800, async () => {
      await this.started;
      await pingAnyMaster(this.client);
    });
  }

  /**
   * Stops taking jobs, lets running methods finish for `shutdownGraceMs`, then aborts them;
   * their jobs go back to the queue (no attempt used) for another worker.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.versionScan);
      const abortTimer = setTimeout(() => this.abortAll(), this.shutdownGraceMs);
      let finished = false;
      try {
        const closed = Promise.all(this.workers.map((worker) => worker.close())).then(() => true);
        finished = await Promise.race([
          closed,
          sleep(this.shutdownGraceMs + ABORTED_METHODS_GRACE_MS).then(() => false),
        ]);
      } catch (error) {
        this.logger.warn('The BullMQ worker did not close cleanly', { error: String(error) });
      } finally {
        // Whatever BullMQ did, this worker's own timers, subscriptions and connections go.
        clearTimeout(abortTimer);
        if (!finished) {
          this.logger.warn('Some tasks ignored the shutdown abort; other workers will recover their jobs as stalled', {
            taskIds: [...this.running.keys()],
          });
        }
        // Outcomes whose completion never came: their share slots are freed alone, and awaited.
        this.fold.forget();
        await Promise.allSettled([...this.pendingWrites]);
        await this.shares.close();
        await this.versionWaits.close();
        await this.childQueues.close();
        await this.cancels.close();
        await this.answers.close();
        await closeClient(this.subscriber);
        if (finished) await closeClient(this.client);
        else this.client.disconnect();
        await this.onClosed?.().catch((error: unknown) =>
          this.logger.warn('Could not close what the worker was given to close', { error: String(error) }),
        );
      }
    })();
    return this.closing;
  }

  private listenTo(worker: Worker<TaskJobData, void>, shard: ShardNames): void {
    // BullMQ reports the same connection error over and over while Redis is away.
    const errors = limitRepeats(this.logger);
    worker.on('error', (error) => errors.warn('Task worker error', { shard: shard.queue, error: error.message }));
    worker.on('failed', (job, error) => {
      if (job) this.track(this.recordFailedAttempt(job, error));
    });
    // The job is already back in the queue when BullMQ tells us. In the rare case another worker
    // starts it before this note lands, the note shows until that run's first progress report.
    worker.on('stalled', (jobId) => {
      this.track(
        this.store.update(jobId, (current) =>
          current.status === 'working' ? requeuedChange(REQUEUED_AFTER_STALL_MESSAGE) : undefined,
        ),
      );
    });
  }

  private async process(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    bullSignal: AbortSignal | undefined,
  ): Promise<void> {
    const taskId = job.id as string;
    const controller = new AbortController();
    bullSignal?.addEventListener('abort', () => controller.abort(bullSignal.reason), { once: true });
    const run: RunningTask = { controller, shuttingDown: false, paused: false };
    // An outcome left by an earlier run of this job that never completed it (its lock was lost).
    this.fold.forget(taskId);
    // The owner's fair share, across every worker. On one Redis the script that activated the
    // job took its slot already, or put the task in line (record-fold.ts); else it is taken below.
    const share = job.data.share;
    const takenAtActivation = this.fold.takenAtActivation(taskId);
    // Registered before anything is read: a cancel heard from now on reaches `run`, and one
    // heard before is in `recentCancels`.
    this.running.set(taskId, run);
    this.abortIfCancelled(taskId, run);
    try {
      // Over the share: the job leaves this worker to wait, before it takes any slot here.
      if (share && takenAtActivation !== undefined && takenAtActivation !== 'taken') {
        return await this.waitForShare(job, token, share, takenAtActivation.running);
      }
      let slot: ShareSlot | undefined =
        share && takenAtActivation === 'taken' ? this.shares.held(share.owner, taskId) : undefined;
      // Set when the script that completes the job frees the slot (record-fold.ts).
      let slotFreedByFinish = false;
      const freeShareSlot = () => {
        // Freed on every ending (outcome, cancel, park, hand-back); a killed worker's lease runs out.
        // An outcome's completion frees it in its own script; a completion that never comes
        // leaves it to the lease, renewed no more.
        if (slotFreedByFinish) slot?.stopRenewing();
        else if (slot) {
          const held = slot;
          this.track(withDeadline('release a fair-share slot', CROSS_SHARD_DEADLINE_MS, () => held.release()));
        }
      };
      // A job that waits here for a slot is still `queued` to clients, and a cancel's message
      // may reach this process after the slot frees up (on a cluster it crosses nodes): after a
      // wait, only the record can say the task is still wanted.
      const mustRead = !(this.processSlots?.hasRoom('') ?? true) || !this.slots.hasRoom(job.data.tool);
      // The job names its tool, so the slot is taken before any Redis read; a task gone or ended
      // meanwhile (cancelled while queued) stops at the read or by the cancel above.
      const releaseProcessSlot = this.processSlots ? await this.processSlots.acquire('', controller.signal) : () => {};
      if (!releaseProcessSlot) {
        freeShareSlot();
        return this.afterAbort(job, token, run);
      }
      const releaseToolSlot = await this.slots.acquire(job.data.tool, controller.signal);
      if (!releaseToolSlot) {
        releaseProcessSlot();
        freeShareSlot();
        return this.afterAbort(job, token, run);
      }
      if (share && !slot) {
        let turn: ShareTurn;
        try {
          turn = await withDeadline('take a fair-share slot', CROSS_SHARD_DEADLINE_MS, () =>
            this.shares.acquire(share.owner, taskId, share.limit, job.timestamp),
          );
        } catch (error) {
          releaseToolSlot();
          releaseProcessSlot();
          return this.waitForShareStore(job, token, error);
        }
        if ('running' in turn) {
          releaseToolSlot();
          releaseProcessSlot();
          return this.waitForShare(job, token, share, turn.running);
        }
        slot = turn;
      }
      const release = () => {
        releaseToolSlot();
        releaseProcessSlot();
        freeShareSlot();
      };
      let startedNote: NodeJS.Timeout | undefined;
      try {
        const snapshot = mustRead ? undefined : startSnapshot(job, this.clock());
        const started = snapshot ?? (await this.store.read(taskId)) ?? (await this.awaitRecord(job, controller.signal));
        // A park ends when its job runs again, whatever the run finds.
        if (job.data.parked) await this.endPark(job, job.data.parked, started?.record);
        if (!started || isTerminal(started.record.status)) return;
        // Aborted before the method started: a cancel heard early ends here, a shutdown hands back.
        if (controller.signal.aborted) return this.afterAbort(job, token, run);
        run.known = started;
        const remember = (written: StoredRecord | undefined) => {
          if (written && Number(written.version) > Number(run.known?.version ?? 0)) run.known = written;
        };
        // A quick run goes straight from "queued" to its outcome; only a run that lasts gets the
        // note cleared for its progress. That saves a write per task where tasks are short.
        if (isRuntimeNote(started.record.statusMessage)) {
          // Only the note this run started with: a failed attempt may have written the next one.
          const note = started.record.statusMessage;
          startedNote = setTimeout(
            () =>
              this.track(
                this.store
                  .update(taskId, (current) => (current.statusMessage === note ? startedChange(current) : undefined))
                  .then(remember),
              ),
            STARTED_NOTE_DELAY_MS,
          );
        }
        const progress = new ProgressWriter(this.store, taskId, this.logger, remember);
        let outcome: TaskOutcome | undefined;
        let retry: AttemptFailed | undefined;
        const record = started.record;
        const attempt = job.data.attempt ?? 1;
        // Run before: after a pause for answers, a lost worker or a shutdown hand-back.
        const resumed =
          attempt > 1 ||
          job.attemptsMade > 0 ||
          (job.stalledCounter ?? 0) > 0 ||
          Object.keys(record.inputAnswers ?? {}).length > 0 ||
          Object.keys(record.steps ?? {}).length > 0 ||
          Object.keys(record.sleeps ?? {}).length > 0 ||
          Object.keys(record.callbacks ?? {}).length > 0;
        const mine = this.versions.get(job.data.tool);
        if (mine !== undefined) {
          // Pinned once the method has run. Answers given on the call itself (upfront questions)
          // also count: they were checked against the accepting server's version, which the
          // record carries from creation, so that version is the one to run them.
          const pinned = record.toolVersion;
          if (resumed && pinned !== undefined && pinned !== mine) {
            clearTimeout(startedNote);
            // Freed before the wait moves the job: a worker with the version may take it at once
            // and keep the slot (the share's slots are the task's), and a release sent after that
            // would free the new run's slot, letting the owner run one over its share.
            release();
            return await this.waitForVersion(job, token, record, pinned, mine);
          }
          if (job.data.versionWaitSince !== undefined) await this.endVersionWait(job, pinned ?? mine);
          // A fresh task takes the version of the worker that first runs it.
          if (pinned !== mine) {
            remember(
              await this.store.update(
                taskId,
                (current) => (isTerminal(current.status) ? undefined : { status: current.status, toolVersion: mine }),
                undefined,
                run.known,
              ),
            );
          }
        }
        const control: ExecutionControl = {
          signal: controller.signal,
          placement: {
            worker: PROCESS_NAME,
            jobId: taskId,
            resumed,
            ...(job.data.trace && { trace: job.data.trace }),
          },
          attempt,
          report: (update) => progress.report(update),
          ask: (key, pending) => this.ask(taskId, key, pending, run),
          step: (name, work) => this.step(taskId, name, work),
          // Progress reported before a wait is written first: a write landing after the wait's
          // note would bury it under a message of the run that has just parked.
          sleep: async (key, durationMs) => {
            await progress.flush();
            return this.sleep(job, key, durationMs, run);
          },
          callback: async (key, request) => {
            const hook = await this.callback(taskId, key, request, run);
            return {
              ...hook,
              wait: async () => {
                await progress.flush();
                return hook.wait();
              },
            };
          },
          spawn: (key, create) => {
            run.spawned = true;
            return this.spawn(taskId, key, create);
          },
          awaitChildren: (children) => this.awaitChildren(job, children, run),
        };
        try {
          outcome = await this.executor.execute(started.record, control);
        } catch (error) {
          // Executors report failures as outcomes; a throw is a bug in the executor itself, the
          // pause unwinding the method on purpose (then `run.paused` is set and it parks), or an
          // attempt the tool's retry policy runs again.
          if (isAttemptFailed(error)) retry = error;
          else outcome = internalErrorOutcome(error);
        }
        await progress.flush();
        if (run.shuttingDown) return this.afterAbort(job, token, run);
        if (retry && !controller.signal.aborted) {
          clearTimeout(startedNote);
          return this.retryLater(job, token, retry);
        }
        if (!outcome) return;
        // A paused run ends in a park even if the method caught the pause and returned anyway:
        // whatever it returned was computed without the answer.
        if (run.paused && !controller.signal.aborted) return this.park(job, token, started.record, run.wait);
        if (run.waitingChildren && !controller.signal.aborted) {
          return this.parkForChildren(job, token, run.waitingChildren);
        }
        // Children nobody awaits any more end with their parent, and stop holding its job back.
        if (run.spawned || record.children) await this.releaseChildren(taskId);
        if (record.parent) {
          // A child's end updates its parent's count, which needs the written record at hand:
          // written here rather than folded into the completion (one command more per child).
          const ended = await this.store.update(taskId, outcomeChange(outcome), undefined, run.known);
          if (ended?.changed) await this.noteChildEnded(ended.record);
          return;
        }
        // A cancelled task is terminal already: the state machine drops this late outcome.
        // Written against the newest version this run knows (with no other writer, no read),
        // in the command that completes the job once this returns (record-fold.ts).
        const change = outcomeChange(outcome);
        const known = run.known;
        const freed = slot && this.foldsShares ? slot : undefined;
        this.fold.finishWithRecord(
          taskId,
          async (write) => {
            const written = await this.store.update(taskId, change, undefined, known, write);
            if (written || !snapshot || controller.signal.aborted) return written;
            // A run from the job's snapshot read no record: its outcome write is where a record
            // that is not there yet shows. Once it is, the outcome goes on it; never, the job
            // fails as an orphan (awaitRecord throws) rather than complete unseen.
            const late = (await this.store.read(taskId)) ?? (await this.awaitRecord(job, controller.signal));
            return late ? this.store.update(taskId, change, undefined, late, write) : undefined;
          },
          freed && {
            keys: freed.keys,
            released: (head) => this.track(freed.releasedInFinish(head)),
            alone: () => this.track(freed.release()),
          },
        );
        slotFreedByFinish = freed !== undefined;
      } finally {
        clearTimeout(startedNote);
        release();
      }
    } finally {
      // Only this run's entry: a job promoted before this run has unwound (its wait for a fair
      // share, say) may run here again already, and cancels must reach that run.
      if (this.running.get(taskId) === run) this.running.delete(taskId);
    }
  }

  /**
   * The record of a job that found none. A task whose expiry has passed (as far as the job
   * knows it) is simply gone: `undefined` at once, and the job ends quietly. Otherwise the
   * record's write may still be in flight: look again with back-off for `orphanWaitMs`; if it
   * never appears, the job is an orphan, and it fails, logged and counted (`orphaned`), rather
   * than complete unseen. `undefined` also when `signal` aborts (a cancel or a shutdown).
   */
  private async awaitRecord(job: Job<TaskJobData, void>, signal: AbortSignal): Promise<StoredRecord | undefined> {
    const taskId = job.id as string;
    const expiry = job.data.expiresAt ?? (job.data.start && expiresAt(job.data.start));
    if (expiry !== undefined && expiry <= this.clock()) return undefined;
    const began = Date.now();
    let delay = ORPHAN_FIRST_LOOK_MS;
    while (Date.now() - began < this.orphanWaitMs) {
      await sleep(Math.min(delay, Math.max(0, this.orphanWaitMs - (Date.now() - began))), signal);
      if (signal.aborted) return undefined;
      const found = await this.store.read(taskId);
      if (found) return found;
      delay *= 2;
    }
    const waitedMs = Date.now() - began;
    const reason = `orphan job: no task record appeared within ${waitedMs} ms`;
    this.executor.observe?.({
      type: 'orphaned',
      task: {
        taskId,
        tool: job.data.tool,
        principal: job.data.share?.owner ?? job.data.start?.owner ?? null,
        jobId: taskId,
      },
      waitedMs,
      reason,
    });
    throw new (bullmqLibrary().UnrecoverableError)(reason);
  }

  /** Aborts `run` when its task's cancel was heard before the run was registered. */
  private abortIfCancelled(taskId: string, run: RunningTask): void {
    if (!this.recentCancels.delete(taskId)) return;
    run.controller.abort(new Error('The task was cancelled'));
  }

  private rememberCancel(taskId: string): void {
    const now = Date.now();
    this.recentCancels.delete(taskId);
    this.recentCancels.set(taskId, now);
    for (const [id, heardAt] of this.recentCancels) {
      if (this.recentCancels.size <= MAX_RECENT_CANCELS && now - heardAt < RECENT_CANCEL_MS) break;
      this.recentCancels.delete(id);
    }
  }

  /**
   * The answer to `key`, from the record when it was given before; else the run holds its slot
   * for `inputGraceMs` in case the answer comes quickly, then pauses (see `park`).
   */
  private async ask(taskId: string, key: string, pending: PendingInput, run: RunningTask): Promise<InputAnswer> {
    const signal = run.controller.signal;
    const given = await this.store.get(taskId);
    const earlier = given?.inputAnswers?.[key];
    if (earlier) return earlier;
    if (!given || isTerminal(given.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    await this.store.update(taskId, (current) => askChange(current, key, pending));
    const answer = await this.foundWithin(taskId, this.inputGraceMs, signal, (record) => record?.inputAnswers?.[key]);
    if (answer) return answer;
    signal.throwIfAborted();
    run.paused = true;
    throw new TaskPaused([key]);
  }

  /**
   * Resolves with what `find` reads from the record (an answer, a settled hook) once it is
   * there, or `undefined` after `ms`, when the task ends or `signal` aborts. Woken by the
   * answers channel (`answerWaiters`), which answers and callback deliveries both publish on.
   */
  private foundWithin<T>(
    taskId: string,
    ms: number,
    signal: AbortSignal,
    find: (record: TaskRecord | undefined) => T | undefined,
  ): Promise<T | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (found: T | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const waiters = this.answerWaiters.get(taskId);
        waiters?.delete(check);
        if (waiters?.size === 0) this.answerWaiters.delete(taskId);
        resolve(found);
      };
      const check = () => {
        this.store.get(taskId).then(
          (record) => {
            const found = find(record);
            if (found !== undefined || !record || isTerminal(record.status)) finish(found);
          },
          () => {},
        );
      };
      const onAbort = () => finish(undefined);
      const timer = setTimeout(() => finish(undefined), ms);
      signal.addEventListener('abort', onAbort, { once: true });
      const waiters = this.answerWaiters.get(taskId) ?? new Set();
      waiters.add(check);
      this.answerWaiters.set(taskId, waiters);
      // Registered first, then read: a change written in between is seen one way or the other.
      check();
    });
  }

  /**
   * A sleep: its wake time from the record when an earlier run stored it, else stored now. One
   * that is over returns at once; one that ends within `inputGraceMs` is waited out in place
   * (the slot is held: parking and waking would cost more than the wait); a longer one pauses
   * the run, which then parks its job until the wake time (see `park`).
   */
  private async sleep(job: Job<TaskJobData, void>, key: string, durationMs: number, run: RunningTask): Promise<void> {
    const taskId = job.id as string;
    const signal = run.controller.signal;
    const current = await this.store.read(taskId);
    if (!current || isTerminal(current.record.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    signal.throwIfAborted();
    const until = plannedWake(current.record, key, durationMs, this.clock());
    if (until <= this.clock()) return;
    const written = await this.store.update(taskId, (record) => sleepChange(record, key, until), undefined, current);
    if (!written || isTerminal(written.record.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    if (Number(written.version) > Number(run.known?.version ?? 0)) run.known = written;
    const left = until - this.clock();
    if (left > this.inputGraceMs) {
      signal.throwIfAborted();
      run.paused = true;
      run.wait = { reason: 'sleep', until, key };
      throw new TaskPaused([key], { reason: 'sleep', until });
    }
    const task = factsOf(written.record, taskId);
    this.executor.observe?.({ type: 'parked', task, reason: 'sleep', key, until });
    await abortableDelay(left, signal);
    this.executor.observe?.({
      type: 'woke',
      task,
      reason: 'sleep',
      key,
      until,
      lateMs: Math.max(0, this.clock() - until),
    });
    const woke = await this.store.update(taskId, (record) => wokeChange(record, until), undefined, run.known);
    if (woke && Number(woke.version) > Number(run.known?.version ?? 0)) run.known = woke;
  }

  /**
   * The job of a parked task runs again: it is parked no more (out of the gauge's set, the
   * park off its data), and a sleep that is over says it woke. A job woken early (a stray
   * promote) just parks again when its run meets the sleep.
   */
  private async endPark(
    job: Job<TaskJobData, void>,
    parked: ParkedJob,
    record: (TaskRecordLike & { readonly status: TaskStatus }) | undefined,
  ): Promise<void> {
    const taskId = job.id as string;
    const { parked: _ended, ...rest } = job.data;
    await Promise.all([job.updateData(rest), noteUnparked(this.client, this.names, taskId, parked.reason)]);
    const now = this.clock();
    if (parked.reason !== 'sleep' || parked.key === undefined || now < parked.until) return;
    // A task that ended meanwhile (a cancel that could not remove the job) does not wake.
    if (!record || isTerminal(record.status)) return;
    this.executor.observe?.({
      type: 'woke',
      task: { taskId, tool: job.data.tool, principal: record.owner, jobId: taskId },
      reason: 'sleep',
      key: parked.key,
      until: parked.until,
      lateMs: now - parked.until,
    });
  }

  /**
   * The hook `key`: made and stored on the first run (its token indexed by digest until the
   * task expires), found in the record on a replay.
   */
  private async callback(
    taskId: string,
    key: string,
    request: CallbackRequest,
    run: RunningTask,
  ): Promise<RuntimeCallback> {
    const signal = run.controller.signal;
    const record = await this.store.get(taskId);
    if (!record || isTerminal(record.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    let state = record.callbacks?.[key];
    if (!state) {
      const made = newCallbackState(record, request, this.clock());
      const written = await this.store.update(taskId, (current) => callbackChange(current, key, made));
      state = written?.record.callbacks?.[key];
      if (!state) throw signal.reason ?? new Error(`Task ${taskId} ended`);
    }
    await indexCallbackToken(this.client, this.names, record, key, state.token);
    // Deleted meanwhile: its delete may have cleared the index before this entry was written.
    const after = await this.store.get(taskId);
    if (!after) await forgetCallbackTokens(this.client, this.names, { ...record, callbacks: { [key]: state } });
    return { id: state.id, token: state.token, wait: () => this.waitForCallback(taskId, key, run) };
  }

  /**
   * The hook's outcome, from the record when it settled before; else the run holds its slot for
   * `inputGraceMs` (a quick callback resumes it in place), then parks until the hook settles or
   * its timeout comes, whichever is first. A timeout that came is written here, once.
   */
  private async waitForCallback(taskId: string, key: string, run: RunningTask): Promise<CallbackResult> {
    const signal = run.controller.signal;
    for (;;) {
      const record = await this.store.get(taskId);
      const settled = settledCallback(record, key);
      if (settled) return settled;
      if (!record || isTerminal(record.status)) throw signal.reason ?? new Error(`Task ${taskId} ended`);
      const state = record.callbacks?.[key];
      if (!state) throw new Error(`Task ${taskId} has no callback '${key}'`);
      const facts = { taskId, tool: record.tool, principal: record.owner, jobId: taskId };
      if (callbackDue(record, key, this.clock())) {
        const written = await this.store.update(taskId, (current) => callbackTimeoutChange(current, key, this.clock()));
        const after = settledCallback(written?.record, key);
        if (written?.changed && after?.status === 'timed_out') {
          await this.client.zrem(this.names.parked('callback'), taskId);
          this.executor.observe?.({
            type: 'woke',
            task: facts,
            reason: 'callback',
            name: state.name,
            outcome: 'timed_out',
          });
        }
        if (after) return after;
        throw signal.reason ?? new Error(`Task ${taskId} ended`);
      }
      const noted = await this.store.update(taskId, (current) => callbackWaitChange(current, key));
      if (noted?.changed)
        this.executor.observe?.({ type: 'parked', task: facts, reason: 'callback', name: state.name });
      const until = state.timeoutAt ?? Math.min(expiresAt(record), Date.now() + MAX_PARK_MS);
      const graceMs = Math.min(this.inputGraceMs, Math.max(0, until - this.clock()));
      const quick = await this.foundWithin(taskId, graceMs, signal, (record) => settledCallback(record, key));
      if (quick) return quick;
      signal.throwIfAborted();
      // The timeout came during the grace: settle it (next round) rather than park for nothing.
      if (this.clock() >= until) continue;
      run.paused = true;
      run.wait = { reason: 'callback', until, key, ready: (fresh) => !hasPendingCallback(fresh, key, this.clock()) };
      throw new TaskPaused([key], { reason: 'callback', until });
    }
  }

  /** The child under `key`: the recorded one, else a new one, recorded before it is returned. */
  private async spawn(
    taskId: string,
    key: string,
    create: (childCount: number) => Promise<ChildEntry>,
  ): Promise<ChildEntry> {
    const record = await this.store.get(taskId);
    const known = record?.children?.[key];
    if (known) return known;
    const entry = await create(Object.keys(record?.children ?? {}).length);
    await this.store.update(taskId, (current) => spawnChange(current, key, entry));
    return entry;
  }

  /**
   * The children's records once all have ended. Otherwise the run ends (`ChildrenPaused`) and
   * its job waits in BullMQ's waiting-children state, holding no slot, until the last child's
   * job finishes (see `parkForChildren`); the method then runs again and finds them ended.
   */
  private async awaitChildren(
    job: Job<TaskJobData, void>,
    children: readonly ChildEntry[],
    run: RunningTask,
  ): Promise<readonly TaskRecord[]> {
    const records: TaskRecord[] = [];
    let done = 0;
    for (const child of children) {
      const record = await this.store.get(child.taskId);
      if (!record) throw new Error(`Child task ${child.tool} (${child.taskId}) is gone (expired or deleted)`);
      if (isTerminal(record.status)) done++;
      records.push(record);
    }
    run.controller.signal.throwIfAborted();
    if (done < children.length) {
      run.waitingChildren = { count: children.length, done };
      throw new ChildrenPaused(children.length, done);
    }
    if (job.data.childWait) {
      await job.updateData({ ...withoutStart(job.data), childWait: undefined });
      this.executor.observe?.({
        type: 'woke',
        task: { taskId: job.id as string, tool: job.data.tool, principal: null, jobId: job.id as string },
        reason: 'children',
        count: children.length,
      });
    }
    return records;
  }

  /**
   * Parks the job until its children's jobs have finished: BullMQ's waiting-children state (a
   * flow: each child's job names this one as its parent), which holds no slot and wakes the
   * job when the last child's job completes. When they all finished meanwhile, it runs again.
   */
  private async parkForChildren(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    wait: { readonly count: number; readonly done: number },
  ): Promise<void> {
    const taskId = job.id as string;
    const noted = await this.store.update(taskId, (current) => {
      if (isTerminal(current.status)) return undefined;
      const message = childrenMessage(current.children ?? {});
      return current.statusMessage === message ? undefined : { status: current.status, statusMessage: message };
    });
    if (noted && isTerminal(noted.record.status)) return;
    await job.updateData({ ...withoutStart(job.data), childWait: true });
    if (await job.moveToWaitingChildren(token ?? '')) {
      this.executor.observe?.({
        type: 'parked',
        task: { taskId, tool: job.data.tool, principal: noted?.record.owner ?? null, jobId: taskId },
        reason: 'children',
        count: wait.count,
        done: wait.done,
      });
      throw new (bullmqLibrary().WaitingChildrenError)();
    }
    // Every child's job finished between the read and the move: run again at once.
    await job.moveToWait(token);
    throw new (bullmqLibrary().WaitingError)();
  }

  /**
   * A task that ends leaves no child running for nobody: its unfinished children are cancelled,
   * and their jobs stop being dependencies of its job (BullMQ would refuse to complete it).
   */
  private async releaseChildren(taskId: string): Promise<void> {
    const record = await this.store.get(taskId);
    if (!record) return;
    for (const childId of unfinishedChildren(record)) {
      const cancelled = await this.store.update(
        childId,
        (current) =>
          isTerminal(current.status) ? undefined : { status: 'cancelled', statusMessage: CANCELLED_WITH_PARENT },
        { channel: this.names.cancelChannel, message: childId },
      );
      const job = await this.childQueues.of(childId).getJob(childId);
      await job?.removeChildDependency().catch(() => {
        // Finished meanwhile: its dependency went with it.
      });
      if (cancelled?.changed) await job?.remove().catch(() => {});
    }
  }

  /** A child ended: its parent's entry says so, and a parent waiting for it shows the new count. */
  private async noteChildEnded(child: TaskRecord): Promise<void> {
    const parent = child.parent;
    if (!parent) return;
    await this.store.update(parent.taskId, (current) => childEndedChange(current, child));
  }

  private async step<T>(taskId: string, name: string, work: () => Promise<T>): Promise<T> {
    const record = await this.store.get(taskId);
    if (record?.steps && name in record.steps) return record.steps[name] as T;
    const value = await work();
    await this.store.update(taskId, (current) => stepChange(current, name, value));
    return value;
  }

  /**
   * Parks the job until its questions are answered, or until `wait.until` (a sleep's wake
   * time): it leaves the active set (freeing the slot) for the delayed set, without using an
   * attempt (docs/design/bullmq.md §1), and any worker runs it again from the top when it is
   * due. An answer that landed while the job was still active could not promote it, so look
   * once more after parking; likewise a cancel that came while the job was active could not
   * remove it, so a task found ended loses its job now. Without `wait` the delay is the task's
   * remaining lifetime: a job that wakes without its record is skipped.
   */
  private async park(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    record: TaskRecordLike,
    wait?: RunningTask['wait'],
  ): Promise<void> {
    const taskId = record.taskId;
    const until = wait?.until ?? Math.min(expiresAt(record), Date.now() + MAX_PARK_MS);
    const parked: ParkedJob = { reason: wait?.reason ?? 'input', until, ...(wait && { key: wait.key }) };
    // The next run must read the record (answers, steps, sleeps), not start from the snapshot.
    await job.updateData({ ...withoutStart(job.data), parked });
    await job.moveToDelayed(until, token);
    await noteParked(this.client, this.names, parked.reason, taskId, until, this.clock());
    const fresh = await this.store.get(taskId);
    if (!fresh || isTerminal(fresh.status)) {
      await Promise.all([
        job.remove().catch(() => {
          // Taken by a worker already, which finds the task ended and skips it.
        }),
        noteUnparked(this.client, this.names, taskId, parked.reason),
      ]);
    } else if (wait?.ready) {
      // A callback that settled while the job was still active could not promote it.
      if (wait.ready(fresh)) {
        await job.promote().catch(() => {
          // Already promoted by the process that delivered the payload.
        });
      }
    } else if (wait?.reason === 'sleep') {
      this.executor.observe?.({ type: 'parked', task: factsOf(fresh, taskId), reason: 'sleep', key: wait.key, until });
    } else if (!wait && !hasOutstandingInput(fresh)) {
      await job.promote().catch(() => {
        // Already promoted by the process that delivered the answer.
      });
    }
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new (bullmqLibrary().DelayedError)();
  }

  /**
   * The owner runs its whole share: the task says so, and its job leaves this worker (delayed,
   * no attempt used) until a release of that owner promotes it, or `SHARE_RECHECK_MS` passes.
   * A task that ended meanwhile (cancelled while queued) just completes its job.
   * Throws BullMQ's `DelayedError` once the job is delayed.
   */
  private async waitForShare(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    share: JobShare,
    running: number,
  ): Promise<void> {
    const taskId = job.id as string;
    const message = shareQueuedMessage(running);
    let firstWait = false;
    let ended = false;
    await this.store.update(taskId, (current) => {
      if (isTerminal(current.status)) {
        ended = true;
        return undefined;
      }
      firstWait = !current.statusMessage?.startsWith('queued (');
      return current.statusMessage === message ? undefined : { status: 'working', statusMessage: message };
    });
    if (ended) return;
    if (firstWait) {
      this.executor.observe?.({
        type: 'waiting',
        task: { taskId, tool: job.data.tool, principal: share.owner, jobId: taskId },
        reason: 'principal_share',
        running,
        limit: share.limit,
      });
    }
    // The record changed: the next run reads it rather than the creation snapshot.
    await this.dropStartSnapshot(job);
    await job.moveToDelayed(this.clock() + SHARE_RECHECK_MS, token);
    const room = await withDeadline('look at a fair share', CROSS_SHARD_DEADLINE_MS, () =>
      this.shares.roomOrLine(share.owner, taskId, share.limit, job.timestamp),
    ).catch((error: unknown) => {
      // The job is delayed already: it looks again by itself after SHARE_RECHECK_MS.
      this.scanLog.warn('Could not reach a fair share; the task looks again later', { error: String(error) });
      return false;
    });
    if (room) await promoteIfDelayed(job);
    // Tells BullMQ the job was moved by us: neither complete nor fail it (returning made BullMQ
    // complete a job it no longer held: "Missing lock" errors, and two wasted round trips).
    throw new (bullmqLibrary().DelayedError)();
  }

  /**
   * The owner's fair share could not be read (its home shard's master is lost, or slow): the
   * task keeps its place, queued, and its job leaves this worker (delayed, no attempt used, no
   * slot held) to look again after `SHARE_STORE_RECHECK_MS`, until its home answers or its TTL
   * ends. Running it without its share would break the share's bound.
   */
  private async waitForShareStore(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    error: unknown,
  ): Promise<void> {
    const taskId = job.id as string;
    const home = this.names.homeOf(job.data.share?.owner ?? null).queue;
    this.scanLog.warn('Could not reach the fair share of a task; it waits and looks again', {
      shard: home,
      error: String(error),
    });
    const message = `queued (the fair-share store on shard ${home} does not answer)`;
    const noted = await this.store.update(taskId, (current) =>
      isTerminal(current.status) || current.statusMessage === message
        ? undefined
        : { status: 'working', statusMessage: message },
    );
    if (!noted || isTerminal(noted.record.status)) return;
    await this.dropStartSnapshot(job);
    await job.moveToDelayed(this.clock() + SHARE_STORE_RECHECK_MS, token);
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new (bullmqLibrary().DelayedError)();
  }

  /**
   * The task resumes, but this worker runs `mine` of its tool, not the `pinned` version it
   * started with: its job leaves this worker (delayed, no attempt used, no slot held) and joins
   * the set a worker with `pinned` wakes (see version-waits.ts), or looks again after
   * `VERSION_RECHECK_MS`. Once `versionWaitMs` has passed since the wait began, the task fails.
   */
  private async waitForVersion(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    record: TaskRecordLike & { readonly tool: string; readonly owner: string | null },
    pinned: string,
    mine: string,
  ): Promise<void> {
    const taskId = job.id as string;
    const tool = job.data.tool;
    const now = this.clock();
    const since = job.data.versionWaitSince ?? now;
    if (now - since >= this.versionWaitMs) {
      // Out of the count first, so whoever sees the task fail no longer counts it as waiting.
      await this.versionWaits.done(tool, pinned, taskId);
      const outcome = versionChangedOutcome(tool, pinned, mine);
      await this.store.update(taskId, (current) => (isTerminal(current.status) ? undefined : outcomeChange(outcome)));
      return;
    }
    const message = versionWaitMessage(tool, pinned);
    let firstWait = false;
    let ended = false;
    await this.store.update(taskId, (current) => {
      if (isTerminal(current.status)) {
        ended = true;
        return undefined;
      }
      firstWait = current.statusMessage !== message;
      return firstWait ? { status: current.status, statusMessage: message } : undefined;
    });
    if (ended) return;
    if (firstWait) {
      this.executor.observe?.({
        type: 'waiting',
        task: { taskId, tool, principal: record.owner, jobId: taskId },
        reason: 'version',
        version: pinned,
        workerVersion: mine,
      });
    }
    await job.updateData({ ...withoutStart(job.data), versionWaitSince: since });
    await this.versionWaits.wait(tool, pinned, taskId);
    if (await this.versionWaits.claimedBy(taskId, pinned)) {
      // A worker with the version woke the job to take it, and this one got there first: back
      // to the queue at once. The matching worker, woken by the same move, takes it next.
      await job.moveToWait(token);
      throw new (bullmqLibrary().WaitingError)();
    }
    await job.moveToDelayed(Math.min(now + VERSION_RECHECK_MS, since + this.versionWaitMs), token);
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new (bullmqLibrary().DelayedError)();
  }

  /** A worker with the task's version took it: the wait is over (the next one starts afresh). */
  private async endVersionWait(job: Job<TaskJobData, void>, version: string): Promise<void> {
    const { versionWaitSince: _ended, ...rest } = job.data;
    await job.updateData(rest);
    await this.versionWaits.done(job.data.tool, version, job.id as string);
  }

  /** Wakes the tasks waiting for the versions this worker runs, now and every `VERSION_SCAN_MS`. */
  private wakeVersionWaiters(): void {
    if (this.closing || this.versions.size === 0) return;
    const scan = async () => {
      // One cheap count per shard while nothing waits (the usual case), rather than a look per
      // tool; a shard whose master is lost is skipped, and the others are still woken.
      // Bounded: a lost master's commands wait on this connection until it is back.
      const counts = await withDeadline('count version waits', CROSS_SHARD_DEADLINE_MS, () =>
        this.versionWaits.count(),
      );
      const failures: string[] = [];
      for (const [shard, count] of counts.entries()) {
        if (count.status === 'rejected') failures.push(`${this.names.shards[shard]?.queue}: ${String(count.reason)}`);
        if (count.status !== 'fulfilled' || count.value === 0) continue;
        try {
          await withDeadline('wake version waits', CROSS_SHARD_DEADLINE_MS, async () => {
            for (const [tool, version] of this.versions) await this.versionWaits.wake(shard, tool, version);
          });
        } catch (error) {
          failures.push(`${this.names.shards[shard]?.queue}: ${String(error)}`);
        }
      }
      if (failures.length > 0) throw new Error(failures.join('; '));
    };
    scan()
      .catch((error: unknown) => {
        // A scan cut short by close() is no news.
        if (!this.closing) this.scanLog.warn('Could not wake tasks waiting for a version', { error: String(error) });
      })
      .finally(() => {
        if (!this.closing) {
          this.versionScan = setTimeout(() => this.wakeVersionWaiters(), VERSION_SCAN_MS);
          this.versionScan.unref();
        }
      });
  }

  /**
   * Runs the job again after the back-off `failed` asks for, as attempt `failed.next`: the note
   * goes on the record (the task stays `working`), the attempt number into the job data, and
   * the job into BullMQ's delayed set until then, freeing the slot; any worker takes it when it
   * is due, so a worker lost meanwhile loses nothing. BullMQ's own attempts stay the budget of
   * infrastructure failures (docs/design/bullmq.md §3).
   */
  private async retryLater(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    failed: AttemptFailed,
  ): Promise<void> {
    const taskId = job.id as string;
    // The attempt number first: a worker lost from here on has its job recovered as the next
    // attempt (at once rather than after the delay, but nothing repeats a finished attempt).
    // The next attempt must also read the record (steps), not start from the snapshot.
    await job.updateData({ ...withoutStart(job.data), attempt: failed.next });
    const noted = await this.store.update(taskId, (current) =>
      current.status === 'working' ? { status: 'working', statusMessage: failed.message } : undefined,
    );
    // Cancelled (or gone) meanwhile: nothing to retry; the job just completes.
    if (!noted || isTerminal(noted.record.status)) return;
    await job.moveToDelayed(Date.now() + failed.delayMs, token);
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new (bullmqLibrary().DelayedError)();
  }

  /**
   * A cancel needs nothing more (the record is terminal, the job just completes). A shutdown
   * hands the job back: to the head of the queue, without using an attempt.
   */
  private async afterAbort(job: Job<TaskJobData, void>, token: string | undefined, run: RunningTask): Promise<void> {
    if (!run.shuttingDown) return;
    // The note goes first: once the job is back in the queue, another worker may start it at
    // once, and its "started" write must not be overwritten by this older news.
    await this.store.update(job.id as string, (current) =>
      current.status === 'working' ? requeuedChange(REQUEUED_AFTER_SHUTDOWN_MESSAGE) : undefined,
    );
    // The run may have stored steps or asked questions: the next one reads the record.
    await this.dropStartSnapshot(job);
    await job.moveToWait(token);
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new (bullmqLibrary().WaitingError)();
  }

  private async dropStartSnapshot(job: Job<TaskJobData, void>): Promise<void> {
    if (!job.data.start) return;
    await job.updateData(withoutStart(job.data));
  }

  /** BullMQ's verdict on a failed attempt: `finishedOn` is set only when it gives up. */
  private async recordFailedAttempt(job: Job<TaskJobData, void>, error: Error): Promise<void> {
    const taskId = job.id as string;
    if (job.finishedOn) {
      const outcome = finalFailureOutcome(job.failedReason ?? error.message);
      await this.store.update(taskId, (current) => (isTerminal(current.status) ? undefined : outcomeChange(outcome)));
      // A job failed for good after its worker was lost still holds its owner's slot: free it
      // now rather than at the lease's end (after a run here it is free already; no harm).
      const share = job.data.share;
      if (share) {
        await withDeadline('release a fair-share slot', CROSS_SHARD_DEADLINE_MS, () =>
          this.shares.releaseFor(share.owner, taskId),
        );
      }
      return;
    }
    await this.store.update(taskId, (current) =>
      current.status === 'working' ? retryChange(job.delay ?? 0, job.attemptsMade, job.opts.attempts ?? 1) : undefined,
    );
  }

  private abortAll(): void {
    for (const run of this.running.values()) {
      run.shuttingDown = true;
      run.controller.abort(new Error('The worker is shutting down'));
    }
  }

  private track(write: Promise<unknown>): void {
    const tracked = write
      .catch((error: unknown) => this.logger.warn('Could not update a task record', { error: String(error) }))
      .finally(() => this.pendingWrites.delete(tracked));
    this.pendingWrites.add(tracked);
  }
}

/**
 * The record a job may start from without reading it: the snapshot the job carries, on the
 * job's first run only (a retry or a lost worker's run may follow writes the snapshot lacks),
 * and not past the task's expiry (its record is gone). `undefined`: read the record.
 */
export function startSnapshot(job: Job<TaskJobData, void>, now: number): StoredRecord | undefined {
  const start = job.data.start;
  if (!start || job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0) return undefined;
  if (expiresAt(start) <= now) return undefined;
  // The insert stores version 1 (record-store.ts); any later write that matters removed `start`.
  return { record: start, version: '1' };
}

/** The shards named by `indexes` (all when omitted); throws naming an index that is not a shard. */
function consumedShards(names: RuntimeNames, indexes: readonly number[] | undefined): readonly ShardNames[] {
  if (indexes === undefined) return names.shards;
  if (indexes.length === 0) throw new RangeError('consumeShards is empty: a worker must take jobs from some shard');
  const chosen = new Set<ShardNames>();
  for (const index of indexes) {
    const shard = Number.isInteger(index) ? names.shards[index] : undefined;
    if (!shard) {
      throw new RangeError(
        `consumeShards: ${String(index)} is not a shard; the app has shards 0 to ${names.shards.length - 1}`,
      );
    }
    chosen.add(shard);
  }
  return [...chosen];
}

/** A worker's `concurrency`: a whole number of 1 or more, or a RangeError naming it. */
export function checkConcurrency(concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a whole number of 1 or more, got ${String(concurrency)}`);
  }
}

type TaskRecordLike = Parameters<typeof expiresAt>[0] & {
  readonly taskId: string;
  readonly tool: string;
  readonly owner: string | null;
};

/** Resolves after `ms`, or rejects with the signal's reason once it aborts (ms is at most a grace). */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
