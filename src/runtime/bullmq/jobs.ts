/**
 * The BullMQ queue tasks run on. The job id is the task id. The record in Redis is the truth;
 * the job carries a snapshot of it as created (`start`), which is all a first run needs, so a
 * worker starts a fresh job without reading the record. Anything that makes the snapshot stale
 * before the job runs for the first time removes it from the job data in the same Redis
 * operation (a cancel: see record-store.ts; a park or a hand-back: see worker.ts), and any run
 * after the first (a retry, a lost worker) reads the record.
 */
import type { JobsOptions, Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { expiresAt, type TaskRecord } from '../../engine/task.js';
import { captureTraceContext } from '../../observe/tracing.js';
import type { RedisClient } from './connection.js';
import type { ShardNames } from './keys.js';
import { bullmqLibrary } from './libraries.js';

/** Job data: the tool (for dashboards and tool slots), the trace, and the start snapshot. */
export interface TaskJobData {
  readonly tool: string;
  /** The creating request's trace context (W3C `traceparent`), when an OpenTelemetry SDK is installed. */
  readonly trace?: Readonly<Record<string, string>>;
  /** The record as created, until something made it stale (see above). */
  readonly start?: TaskRecord;
  /** The fair share the task's owner has, as the creating server set it; workers enforce it. */
  readonly share?: JobShare;
  /** The attempt of the method the job runs next, once one failed and its tool retries it (absent: 1). */
  readonly attempt?: number;
  /**
   * When the task began waiting for a worker with its tool's version (ms since the epoch), while
   * it does: the wait fails the task once `versionWaitMs` has passed since.
   */
  readonly versionWaitSince?: number;
  /**
   * When the task's record expires (ms since the epoch), kept once the snapshot is dropped: a
   * job that wakes after it and finds no record knows its task expired (not an orphan).
   */
  readonly expiresAt?: number;
}

/**
 * The owner whose share a run counts against (`null`: anonymous callers, who share one) and
 * how many of its tasks may run at once. It travels on the job, not in worker settings, so
 * every worker applies the limit of the server that accepted the task.
 */
export interface JobShare {
  readonly owner: string | null;
  readonly limit: number;
}

/** The share a new task's job carries. */
export function shareOf(record: Pick<TaskRecord, 'owner'>, limit: number): JobShare {
  return { owner: record.owner, limit };
}

/** The same data without the snapshot (its expiry kept): the job's next run reads the record. */
export function withoutStart(data: TaskJobData): TaskJobData {
  const { start, ...rest } = data;
  const expiry = start && expiresAt(start);
  return expiry !== undefined && Number.isFinite(expiry) ? { ...rest, expiresAt: expiry } : rest;
}

/** The data a cancel puts in a job it cannot remove yet (see record-store.ts), as JSON. */
export function cancelledJobData(record: Pick<TaskRecord, 'tool'>): string {
  return JSON.stringify({ tool: record.tool } satisfies TaskJobData);
}

/**
 * How often BullMQ runs a job again after an infrastructure failure. A method's own error is
 * its task's outcome, or, when its tool has a `retry` policy, a next attempt the worker
 * schedules itself (docs/design/bullmq.md §3); neither uses these attempts.
 */
export interface JobRetryOptions {
  /**
   * Runs of one job before its task fails. The method's own errors are outcomes (or retried by
   * its tool's policy, outside this budget); attempts cover infrastructure failures (a record write that failed, an executor
   * that threw). Stalls (a lost worker) do not use attempts; see `maxStalledCount`.
   */
  readonly attempts?: number;
  /** First back-off delay; it doubles on each retry. */
  readonly backoffMs?: number;
}

/** The queue of one shard: tasks whose id maps to that shard (see keys.ts) have their job here. */
export class TaskQueue {
  private readonly queue: Queue<TaskJobData>;
  private readonly jobOptions: JobsOptions;

  constructor(client: RedisClient, prefix: string, shard: ShardNames, retry: Required<JobRetryOptions>) {
    // A shared client: the queue adds no connection of its own and fails as fast as the client.
    this.queue = new (bullmqLibrary().Queue)<TaskJobData>(shard.queue, { connection: client, prefix });
    // Errors also reach the awaiting caller; without a listener EventEmitter would throw them.
    this.queue.on('error', () => {});
    this.jobOptions = {
      attempts: retry.attempts,
      backoff: { type: 'exponential', delay: retry.backoffMs },
      // The record keeps the outcome; finished jobs are only clutter.
      removeOnComplete: true,
      // Failed jobs stay a day for post-mortems (stack traces live there, not in the record).
      removeOnFail: { age: 24 * 3600, count: 1000 },
    };
  }

  /** Adds the task's job, with the record as created for its first run (see above). */
  async enqueue(record: TaskRecord, share?: JobShare): Promise<void> {
    await this.queue.add(record.tool, this.jobData(record, share), this.optionsFor(record));
  }

  /**
   * The job's options: the task id as job id and the task's priority. BullMQ takes jobs without
   * a priority (0) first, then prioritized ones by number, lower first: the order the memory
   * runtime keeps too. On several shards each shard's queue is ordered on its own.
   */
  private optionsFor(record: TaskRecord): JobsOptions {
    return {
      ...this.jobOptions,
      jobId: record.taskId,
      ...(record.priority !== undefined && record.priority > 0 && { priority: record.priority }),
    };
  }

  private jobData(record: TaskRecord, share: JobShare | undefined): TaskJobData {
    const trace = captureTraceContext();
    return { tool: record.tool, ...(trace && { trace }), start: record, ...(share && { share }) };
  }

  /** A MULTI on the queue's connection that BullMQ's own commands can join (see `addTo`). */
  async transaction(): Promise<ChainableCommander> {
    return (await this.queue.getBackend().client).multi() as unknown as ChainableCommander;
  }

  /** `enqueue`, queued on `transaction`: its reply comes from the transaction's `exec`. */
  addTo(transaction: ChainableCommander, record: TaskRecord, share?: JobShare): void {
    const job = new (bullmqLibrary().Job)<TaskJobData>(
      this.queue,
      record.tool,
      this.jobData(record, share),
      this.optionsFor(record),
      record.taskId,
    );
    // BullMQ queues its command synchronously; this promise only mirrors the transaction's reply.
    job.addJob(transaction as never).catch(() => {});
  }

  /**
   * Removes the job if it is not running (waiting, delayed, or finished). An active job is
   * locked and stays: the worker running it learns of the cancel by pub/sub instead.
   */
  async removeUnlessRunning(taskId: string): Promise<boolean> {
    return (await this.queue.remove(taskId)) === 1;
  }

  /**
   * Wakes a job parked for input. Idempotent: a job that is not parked (still running, about
   * to park, or gone) is left alone; the worker re-checks the record after parking.
   */
  async resume(taskId: string): Promise<void> {
    const job = await this.queue.getJob(taskId);
    if (!job || !(await job.isDelayed())) return;
    await job.promote().catch(() => {
      // Lost a race with the worker's own re-check, which promoted it first.
    });
  }

  /** Jobs waiting, running and delayed (parked for answers or backing off before a retry). */
  async counts(): Promise<Record<'waiting' | 'active' | 'delayed', number>> {
    const counts = await this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
    };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
