/**
 * BullMQ's `Worker`, except that a run of a job that ends while a newer run of the same job is
 * under way in the same worker leaves that run's lock renewal in place.
 *
 * BullMQ's lock manager tracks runs by job id, and a run drops the id when it ends. A run that
 * parks moves its job to delayed before it throws `DelayedError`; if the job is promoted in
 * between (an answer, a settled callback, the park's own look) and this worker takes it again,
 * the parking run's end drops the new run's entry: its lock is renewed no more, lapses after
 * `lockDuration`, and the job runs a second time elsewhere (test/bullmq/park-overlap.test.ts).
 *
 * The entries are BullMQ's internals (`lockManager.trackedJobs`). A BullMQ release that keeps
 * them elsewhere leaves this worker plain BullMQ's, which `guardsOverlappingRuns` tells, and the
 * task worker says so once at start-up (test/bullmq/lock-tracking.test.ts).
 */
import type { Job, Worker } from 'bullmq';
import { bullmqLibrary } from './libraries.js';

/** One run's entry in BullMQ's lock manager (its `trackedJobs`, a protected field). */
interface TrackedRun {
  readonly token: string;
  readonly ts: number;
  readonly abortController?: AbortController;
}

let overlapSafe: typeof Worker | undefined;

/** BullMQ's entries of the runs `worker` is renewing the locks of; `undefined` where it keeps none there. */
function trackedRunsOf(worker: Worker): Map<string, TrackedRun> | undefined {
  const tracked = (worker as unknown as { readonly lockManager?: { readonly trackedJobs?: unknown } }).lockManager
    ?.trackedJobs;
  return tracked instanceof Map ? (tracked as Map<string, TrackedRun>) : undefined;
}

/**
 * Whether `worker` (from `overlapSafeWorker`) found BullMQ's lock entries, and so keeps a newer
 * run's renewal when an older run of the same job ends; if not, it runs jobs as BullMQ's own.
 */
export function guardsOverlappingRuns(worker: Worker): boolean {
  return trackedRunsOf(worker) !== undefined;
}

/** Called when a run of a job the worker took settles, whatever its end (`onRunSettled`). */
const runSettledListeners = new WeakMap<object, (job: Job) => void>();

/**
 * Calls `listener` each time a job `worker` took (BullMQ's `active` event) is done with: its run
 * and the completion or failure that follows it settled, or it failed without running.
 */
export function onRunSettled(worker: Worker, listener: (job: Job) => void): void {
  runSettledListeners.set(worker, listener);
}

/** The `Worker` class to build task workers with (loaded with bullmq, on first call). */
export function overlapSafeWorker(): typeof Worker {
  if (overlapSafe) return overlapSafe;
  class OverlapSafeWorker<DataType, ResultType, NameType extends string> extends bullmqLibrary().Worker<
    DataType,
    ResultType,
    NameType
  > {
    /** The lock entries of the runs under way, by job id, oldest first. */
    private readonly runs = new Map<string, TrackedRun[]>();

    override processJob(
      job: Job<DataType, ResultType, NameType>,
      token: string,
      fetchNextCallback?: () => boolean,
    ): ReturnType<Worker<DataType, ResultType, NameType>['processJob']> {
      const run = this.processJobOnce(job, token, fetchNextCallback);
      // Only a worker on several shards listens (shard-takes.ts): one shard adds no promise a job.
      const listener = runSettledListeners.get(this);
      return listener ? run.finally(() => listener(job as Job)) : run;
    }

    private async processJobOnce(
      job: Job<DataType, ResultType, NameType>,
      token: string,
      fetchNextCallback?: () => boolean,
    ): ReturnType<Worker<DataType, ResultType, NameType>['processJob']> {
      const jobId = job.id;
      // BullMQ tracks the run synchronously, before its first await: its entry is there now.
      const finished = super.processJob(job, token, fetchNextCallback);
      const tracked = trackedRunsOf(this as unknown as Worker);
      const entry = jobId === undefined ? undefined : tracked?.get(jobId);
      if (!tracked || jobId === undefined || entry?.token !== token) return finished;
      const runs = this.runs.get(jobId) ?? [];
      runs.push(entry);
      this.runs.set(jobId, runs);
      try {
        return await finished;
      } finally {
        runs.splice(runs.indexOf(entry), 1);
        if (runs.length === 0) this.runs.delete(jobId);
        // This run's end dropped the job id: a newer run of the job is renewed again.
        const newer = runs.at(-1);
        if (newer && !tracked.has(jobId)) tracked.set(jobId, newer);
      }
    }
  }
  overlapSafe = OverlapSafeWorker as unknown as typeof Worker;
  return overlapSafe;
}
