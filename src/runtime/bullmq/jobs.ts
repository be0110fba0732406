/**
 * The BullMQ queue tasks run on. The job id is the task id. The record in Redis is the truth;
 * the job carries a snapshot of it as created (`start`), which is all a first run needs, so a
 * worker starts a fresh job without reading the record. Anything that makes the snapshot stale
 * before the job runs for the first time removes it from the job data in the same Redis
 * operation (a cancel: see record-store.ts; a park or a hand-back: see worker.ts), and any run
 * after the first (a retry, a lost worker) reads the record.
 */
import type { JobsOptions, Queue } from 'bullmq';
import type { ParkReason } from '../../engine/lifecycle.js';
import { expiresAt, type TaskRecord } from '../../engine/task.js';
import { captureTraceContext } from '../../observe/tracing.js';
import type { RedisClient } from './connection.js';
import type { ShardNames, ShareNames } from './keys.js';
import { bullmqLibrary } from './libraries.js';
import type { RecordCommand, RecordFold } from './record-fold.js';
import { shareField } from './share-field.js';

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
   * Set while the job is parked (delayed, holding no slot): why, until when, and for a sleep its
   * replay key. The run that takes the job next ends the park (the `woke` event, the gauge).
   */
  readonly parked?: ParkedJob;
  /** The job went to waiting-children for the task's children; its next run tells it woke. */
  readonly childWait?: boolean;
  /**
   * When the task's record expires (ms since the epoch), kept once the snapshot is dropped: a
   * job that wakes after it and finds no record knows its task expired (not an orphan).
   */
  readonly expiresAt?: number;
}

/** Why and until when a job is parked (see `TaskJobData.parked`). */
export interface ParkedJob {
  readonly reason: ParkReason;
  /** When the park ends, ms since the epoch (for `input`: the task's expiry, the latest it waits). */
  readonly until: number;
  /** The sleep's replay key (`sleep`, `sleep#2`, ...), for `sleep`. */
  readonly key?: string;
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

  constructor(
    client: RedisClient,
    prefix: string,
    shard: ShardNames,
    retry: Required<JobRetryOptions>,
    private readonly fold: RecordFold,
    /**
     * The app's share names when a job's share is written into its hash (`SHARE_FIELD`): on
     * one Redis, where the script activating the job can take the slot; not on a cluster.
     */
    private readonly shareFieldNames?: ShareNames,
  ) {
    // A shared client: the queue adds no connection of its own and fails as fast as the client.
    this.queue = new (bullmqLibrary().Queue)<TaskJobData>(
      shard.queue,
      { connection: client, prefix },
      fold.backendFactory,
    );
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

  /**
   * Stores the record with `insert` and adds the task's job in one script (record-fold.ts),
   * the job data carrying the record as created for its first run (see above). Rejects with
   * `FoldedInsertRefusedError` when the insert refused, and then no job was added. A child
   * task's job (`record.parent`) is a child of its parent's job in a BullMQ flow: the parent's
   * job can wait in waiting-children for it. Both are on one shard (the child's id is drawn on
   * its parent's: see `TaskEngine.spawnChild`), as a flow needs on Redis Cluster; the fold takes
   * a job with a parent through BullMQ's standard insert.
   */
  async enqueue(record: TaskRecord, insert: RecordCommand, share?: JobShare): Promise<void> {
    const field = share && this.shareFieldNames ? shareField(this.shareFieldNames, share) : '';
    await this.fold.addWithRecord(
      record.taskId,
      insert,
      () => this.queue.add(record.tool, this.jobData(record, share), this.optionsFor(record)),
      field,
    );
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
      ...(record.parent && {
        parent: { id: record.parent.taskId, queue: this.queue.qualifiedName },
        // A child job that fails for good (its worker lost too often) must not strand the parent.
        ignoreDependencyOnFailure: true,
      }),
    };
  }

  /** Without `start`: the folded insert adds it from the record JSON it stores (record-fold.ts). */
  private jobData(record: TaskRecord, share: JobShare | undefined): TaskJobData {
    const trace = captureTraceContext();
    return { tool: record.tool, ...(trace && { trace }), ...(share && { share }) };
  }

  /**
   * Removes the job if it is not running (waiting, delayed, or finished). An active job is
   * locked and stays: the worker running it learns of the cancel by pub/sub instead.
   */
  async removeUnlessRunning(taskId: string): Promise<boolean> {
    // A parent's children are tasks of their own: the engine cancels them, their jobs stay.
    return (await this.queue.remove(taskId, { removeChildren: false })) === 1;
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

  /** Jobs waiting, running, delayed (parked for answers or backing off) and waiting for their children. */
  async counts(): Promise<Record<'waiting' | 'active' | 'delayed' | 'waiting-children', number>> {
    const counts = await this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'waiting-children');
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      'waiting-children': counts['waiting-children'] ?? 0,
    };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
