/**
 * How many jobs each shard's BullMQ worker may take, in a worker process that consumes several
 * shards. The process runs at most `concurrency` jobs (its `ToolSlots` cap, in worker.ts); a job
 * taken beyond that keeps its lock and waits in the process, then reads its record again before
 * it runs. Every shard's worker taking up to `concurrency` filled the process with such jobs
 * whenever all its shards were busy (0.44× of one shard's throughput on one Redis); splitting
 * `concurrency` between the shards starved a shard that had all the work (the 3-shard contract
 * hang, docs/design/bullmq.md §5).
 *
 * So each shard's worker may hold its own jobs plus the process's free slots, less what the
 * process holds beyond `concurrency`, and at least 1:
 * - a shard with all the work grows to the whole `concurrency` while the others are idle;
 * - in a full process a shard replaces each run that ends (BullMQ's completion fetches the next
 *   job in the same command), and a process holding too many takes none until it is back;
 * - every shard can always hold one job, which waits for the next slot to free (first come,
 *   first served), so no shard starves. At most one job per shard waits beyond the cap, and a
 *   few more while several shards' fetches cross.
 *
 * A job counts from BullMQ's `active` event (the fetch that took it, before its run starts) to
 * the end of its run's completion, so a burst of fetches sees the jobs taken before it.
 *
 * BullMQ's main loop reads its `concurrency` each time it decides to fetch, but a loop whose
 * jobs fill its `concurrency` waits for one of them to end and does not see a raise. So when a
 * shard has no job to take (its queue drained) and the process has free slots, one other shard's
 * loop that has room is woken, as BullMQ's own `resume` wakes its loop; if that one finds
 * nothing either, its own `drained` wakes the next.
 */
import type { Worker } from 'bullmq';

/** The main loop's queue of fetches and runs (BullMQ's private `mainLoopQueue`). */
interface MainLoopQueue {
  add(promise: Promise<unknown>): void;
  numTotal(): number;
}

/** What is read of a shard's worker: BullMQ's `concurrency`, and two private fields. */
type ShardWorker = Pick<Worker, 'concurrency'>;

export class ShardTakes {
  /** The jobs each shard's worker holds: taken, running, or completing. */
  private readonly held: number[];
  private total = 0;

  constructor(
    private readonly concurrency: number,
    private readonly workers: readonly ShardWorker[],
  ) {
    this.held = workers.map(() => 0);
    this.update();
  }

  /** Slots of the process that no job holds: negative while jobs wait beyond the cap. */
  get free(): number {
    return this.concurrency - this.total;
  }

  /** Shard `index`'s worker took a job (BullMQ's `active`). */
  taken(index: number): void {
    this.held[index] = (this.held[index] ?? 0) + 1;
    this.total++;
    this.update();
  }

  /** A job shard `index`'s worker took is done with (`onRunSettled`). */
  settled(index: number): void {
    this.held[index] = (this.held[index] ?? 1) - 1;
    this.total--;
    this.update();
    // A drained shard's completion fetched nothing in the slot it frees: another shard may.
    if (isDrained(this.workers[index])) this.wakeAnother(index);
  }

  /** Shard `index` found its queue empty (BullMQ's `drained`). */
  drained(index: number): void {
    this.wakeAnother(index);
  }

  private update(): void {
    const free = this.free;
    this.workers.forEach((worker, index) => {
      worker.concurrency = Math.max(1, (this.held[index] ?? 0) + free);
    });
  }

  /**
   * Wakes the first shard's loop after `index` (in turn) that may take more and is waiting for
   * one of its jobs to end. A drained shard's loop is skipped: it waits for its queue's marker,
   * and takes a job when one comes.
   */
  private wakeAnother(index: number): void {
    if (this.free <= 0) return;
    for (let step = 1; step < this.workers.length; step++) {
      const worker = this.workers[(index + step) % this.workers.length];
      if (!worker || isDrained(worker)) continue;
      const queue = mainLoopQueue(worker);
      if (!queue || queue.numTotal() >= worker.concurrency) continue;
      // The loop reads a resolved entry as "a job ended", and fetches again if it has room.
      queue.add(Promise.resolve());
      return;
    }
  }
}

function mainLoopQueue(worker: ShardWorker): MainLoopQueue | undefined {
  return (worker as unknown as { readonly mainLoopQueue?: MainLoopQueue | null }).mainLoopQueue ?? undefined;
}

function isDrained(worker: ShardWorker | undefined): boolean {
  return (worker as unknown as { readonly drained?: boolean } | undefined)?.drained === true;
}
