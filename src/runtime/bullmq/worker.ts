/**
 * Runs task jobs with a `TaskExecutor` (the app's tools). Any number of processes may run a
 * `TaskWorker` on the same prefix and queue; each:
 *
 * - re-reads the record before running and skips a task that is gone or already ended (cancelled
 *   while queued, or a job whose creation failed half-way);
 * - turns progress into `statusMessage` and writes the outcome with `outcomeChange` (a late
 *   outcome after a cancel is dropped by the state machine);
 * - aborts a running method when any process cancels its task (pub/sub on the cancel channel);
 * - writes what BullMQ decides about failed attempts: a retry message, or the final failure,
 *   including "the worker was lost" for a job that stalled too often. The worker that detects
 *   it is alive by definition, so that failure always reaches the record.
 */
import { type Job, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { internalErrorOutcome } from '../../engine/outcomes.js';
import type { TaskExecutor } from '../../engine/runtime.js';
import { isTerminal, type TaskOutcome } from '../../engine/task.js';
import { outcomeChange } from '../../engine/transitions.js';
import { createConsoleLogger, type Logger } from '../../tools/logger.js';
import { closeClient, createRedisClient, type RedisConnection } from './connection.js';
import { RedisChannelSubscription } from './events.js';
import type { TaskJobData } from './jobs.js';
import { type RuntimeNames, runtimeNames } from './keys.js';
import { ProgressWriter } from './progress-writer.js';
import { RedisTaskStore } from './record-store.js';
import {
  finalFailureOutcome,
  REQUEUED_AFTER_SHUTDOWN_MESSAGE,
  REQUEUED_AFTER_STALL_MESSAGE,
  requeuedChange,
  retryChange,
  STARTED,
} from './status-mapping.js';
import { ToolSlots } from './tool-slots.js';

/** What an app chooses about its workers; where Redis is comes with `TaskWorkerOptions`. */
export interface TaskWorkerSettings {
  readonly executor: TaskExecutor;
  /** Jobs this process runs at once (default 8). */
  readonly concurrency?: number;
  /**
   * How long a job's lock lives without renewal (default 30 000 ms). A worker that stops
   * renewing (crashed, or its event loop blocked longer than this) loses the job to another.
   * Use the same value in every process: see bullmq-notes §4.
   */
  readonly lockDurationMs?: number;
  /** How often some worker looks for jobs of lost workers (default 30 000 ms; same in every process). */
  readonly stalledIntervalMs?: number;
  /** Lost workers a job survives before its task fails (default 1). */
  readonly maxStalledCount?: number;
  /**
   * On `close()`, how long running methods may take to finish (default 10 000 ms). After that
   * they are aborted and their jobs go back to the queue for another worker.
   */
  readonly shutdownGraceMs?: number;
  readonly logger?: Logger;
}

export interface TaskWorkerOptions extends TaskWorkerSettings {
  readonly connection: RedisConnection;
  readonly prefix?: string;
  readonly queue?: string;
  readonly clock?: () => number;
}

/** How long to wait for methods that ignore the shutdown abort before leaving them to stall recovery. */
const ABORTED_METHODS_GRACE_MS = 2000;

interface RunningTask {
  readonly controller: AbortController;
  /** Aborted because this worker shuts down (the job goes back to the queue), not by a cancel. */
  shuttingDown: boolean;
}

export class TaskWorker {
  readonly names: RuntimeNames;
  /** Resolves once the worker listens for cancels and takes jobs. */
  readonly started: Promise<void>;

  private readonly executor: TaskExecutor;
  private readonly logger: Logger;
  private readonly shutdownGraceMs: number;
  private readonly client: Redis;
  private readonly subscriber: Redis;
  private readonly store: RedisTaskStore;
  private readonly cancels: RedisChannelSubscription;
  private readonly worker: Worker<TaskJobData, void>;
  private readonly slots: ToolSlots;
  private readonly running = new Map<string, RunningTask>();
  /** Record writes made from BullMQ event handlers; `close` waits for them. */
  private readonly pendingWrites = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;

  constructor(options: TaskWorkerOptions) {
    this.names = runtimeNames(options.prefix, options.queue);
    this.executor = options.executor;
    this.logger = options.logger ?? createConsoleLogger();
    this.shutdownGraceMs = options.shutdownGraceMs ?? 10_000;
    this.client = createRedisClient(options.connection, 'worker', this.logger, `${this.names.queue}:worker`);
    this.subscriber = createRedisClient(options.connection, 'subscriber', this.logger, `${this.names.queue}:cancels`);
    this.store = new RedisTaskStore(this.client, this.names, options.clock);
    this.slots = new ToolSlots((tool) => this.executor.concurrencyOf?.(tool));
    this.cancels = new RedisChannelSubscription(this.subscriber, this.names.cancelChannel, (taskId) => {
      // Every worker process hears every cancel; only the one running the task has it here.
      this.running.get(taskId)?.controller.abort(new Error('The task was cancelled'));
    });

    // BullMQ creates the job's AbortSignal only for a processor declaring three parameters.
    const processor = (job: Job<TaskJobData, void>, token: string | undefined, signal: AbortSignal | undefined) =>
      this.process(job, token, signal);
    const lockDuration = options.lockDurationMs ?? 30_000;
    this.worker = new Worker<TaskJobData, void>(this.names.queue, processor, {
      connection: this.client,
      prefix: this.names.prefix,
      concurrency: options.concurrency ?? 8,
      autorun: false,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 1,
    });
    this.worker.on('error', (error) => this.logger.warn('Task worker error', { error: error.message }));
    this.worker.on('failed', (job, error) => {
      if (job) this.track(this.recordFailedAttempt(job, error));
    });
    // The job is already back in the queue when BullMQ tells us. In the rare case another worker
    // starts it before this note lands, the note shows until that run's first progress report.
    this.worker.on('stalled', (jobId) => {
      this.track(
        this.store.update(jobId, (current) =>
          current.status === 'working' ? requeuedChange(REQUEUED_AFTER_STALL_MESSAGE) : undefined,
        ),
      );
    });

    // Take jobs only once cancels can reach us, or a cancel could slip past a job we just started.
    this.started = this.cancels.ready.then(() => {
      if (this.closing) return;
      this.worker.run().catch((error: unknown) => this.logger.error('Task worker stopped', { error: String(error) }));
    });
    this.started.catch(() => {});
  }

  /**
   * Stops taking jobs, lets running methods finish for `shutdownGraceMs`, then aborts them;
   * their jobs go back to the queue (no attempt used) for another worker.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const closed = this.worker.close().then(() => true);
      const abortTimer = setTimeout(() => this.abortAll(), this.shutdownGraceMs);
      const finished = await Promise.race([
        closed,
        sleep(this.shutdownGraceMs + ABORTED_METHODS_GRACE_MS).then(() => false),
      ]);
      clearTimeout(abortTimer);
      if (!finished) {
        this.logger.warn('Some tasks ignored the shutdown abort; other workers will recover their jobs as stalled', {
          taskIds: [...this.running.keys()],
        });
      }
      await Promise.allSettled([...this.pendingWrites]);
      await this.cancels.close();
      await closeClient(this.subscriber);
      if (finished) await closeClient(this.client);
      else this.client.disconnect();
    })();
    return this.closing;
  }

  private async process(
    job: Job<TaskJobData, void>,
    token: string | undefined,
    bullSignal: AbortSignal | undefined,
  ): Promise<void> {
    const taskId = job.id as string;
    const controller = new AbortController();
    bullSignal?.addEventListener('abort', () => controller.abort(bullSignal.reason), { once: true });
    const run: RunningTask = { controller, shuttingDown: false };
    // Registered before the record is read: a cancel either shows in that read or reaches `run`.
    this.running.set(taskId, run);
    try {
      const current = await this.store.get(taskId);
      if (!current || isTerminal(current.status)) return;
      const release = await this.slots.acquire(current.tool, controller.signal);
      if (!release) return this.afterAbort(job, token, run);
      try {
        const started = await this.store.update(taskId, (record) =>
          record.status === 'working' && record.statusMessage !== undefined ? STARTED : undefined,
        );
        if (!started || isTerminal(started.record.status)) return;
        const progress = new ProgressWriter(this.store, taskId, this.logger);
        let outcome: TaskOutcome;
        try {
          outcome = await this.executor.execute(started.record, {
            signal: controller.signal,
            report: ({ message }) => {
              if (message !== undefined) progress.report(message);
            },
          });
        } catch (error) {
          // Executors report failures as outcomes; a throw is a bug in the executor itself.
          outcome = internalErrorOutcome(error);
        }
        await progress.flush();
        if (run.shuttingDown) return this.afterAbort(job, token, run);
        // A cancelled task is terminal already: the state machine drops this late outcome.
        await this.store.update(taskId, outcomeChange(outcome));
      } finally {
        release();
      }
    } finally {
      this.running.delete(taskId);
    }
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
    await job.moveToWait(token);
    // Tells BullMQ the job was moved by us: neither complete nor fail it.
    throw new WaitingError();
  }

  /** BullMQ's verdict on a failed attempt: `finishedOn` is set only when it gives up. */
  private async recordFailedAttempt(job: Job<TaskJobData, void>, error: Error): Promise<void> {
    const taskId = job.id as string;
    if (job.finishedOn) {
      const outcome = finalFailureOutcome(job.failedReason ?? error.message);
      await this.store.update(taskId, (current) => (isTerminal(current.status) ? undefined : outcomeChange(outcome)));
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
