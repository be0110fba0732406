/**
 * The BullMQ queue tasks run on. The job id is the task id, and the job carries no copy of the
 * record: the record in Redis is the truth, so a cancel or an answer never has to chase a stale
 * copy in job data.
 */
import { Queue } from 'bullmq';
import type { TaskRecord } from '../../engine/task.js';
import { captureTraceContext } from '../../observe/tracing.js';
import type { RedisClient } from './connection.js';
import type { ShardNames } from './keys.js';

/** Job data: only what helps a human reading a dashboard, and the trace the task belongs to. */
export interface TaskJobData {
  readonly tool: string;
  /** The creating request's trace context (W3C `traceparent`), when an OpenTelemetry SDK is installed. */
  readonly trace?: Readonly<Record<string, string>>;
}

export interface JobRetryOptions {
  /**
   * Runs of one job before its task fails. The method's own errors are outcomes and never
   * retried; attempts cover infrastructure failures (a record write that failed, an executor
   * that threw). Stalls (a lost worker) do not use attempts; see `maxStalledCount`.
   */
  readonly attempts?: number;
  /** First back-off delay; it doubles on each retry. */
  readonly backoffMs?: number;
}

/** The queue of one shard: tasks whose id maps to that shard (see keys.ts) have their job here. */
export class TaskQueue {
  private readonly queue: Queue<TaskJobData>;

  constructor(
    client: RedisClient,
    prefix: string,
    shard: ShardNames,
    private readonly retry: Required<JobRetryOptions>,
  ) {
    // A shared client: the queue adds no connection of its own and fails as fast as the client.
    this.queue = new Queue<TaskJobData>(shard.queue, { connection: client, prefix });
    // Errors also reach the awaiting caller; without a listener EventEmitter would throw them.
    this.queue.on('error', () => {});
  }

  async enqueue(record: TaskRecord): Promise<void> {
    const trace = captureTraceContext();
    await this.queue.add(
      record.tool,
      { tool: record.tool, ...(trace && { trace }) },
      {
        jobId: record.taskId,
        attempts: this.retry.attempts,
        backoff: { type: 'exponential', delay: this.retry.backoffMs },
        // The record keeps the outcome; finished jobs are only clutter.
        removeOnComplete: true,
        // Failed jobs stay a day for post-mortems (stack traces live there, not in the record).
        removeOnFail: { age: 24 * 3600, count: 1000 },
      },
    );
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
