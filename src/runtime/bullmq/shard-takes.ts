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
 *   first served). At most one job per shard waits beyond the cap, and a few more while several
 *   shards' fetches cross.
 *
 * A job counts from BullMQ's `active` event (the fetch that took it, before its run starts) to
 * the end of its run (before the completion that may fetch the next job), so a burst of
 * fetches sees the jobs taken before it. A job whose run never starts counts until BullMQ is
 * done with it.
 *
 * BullMQ's main loop reads its `concurrency` each time it decides to fetch, but a loop whose
 * jobs fill its `concurrency` waits for one of them to end and does not see a raise. Two wakes,
 * as BullMQ's own `resume` wakes its loop:
 * - when a shard has no job to take (its queue drained) and the process has free slots, one
 *   other shard's loop that has room is woken; if it finds nothing either, its drain wakes the
 *   next;
 * - turns: the shards that refill their own slots could keep a shard whose runs last (one
 *   principal's share of long runs, say) from ever taking its other jobs (the 3-shard
 *   contract's flood case hung so). So when a run ends, a shard whose loop waits on its runs
 *   and that has not taken a job in the last `shards` takes is woken to take one too. The
 *   ending shard's completion may still refill its own slot, one job over the cap until the
 *   next run ends; holding that completion back instead lost the slot whenever the woken
 *   shard's fetch found nothing.
 */
import type { Worker } from 'bullmq';

/** The main loop's queue of fetches and runs (BullMQ's private `mainLoopQueue`). */
interface MainLoopQueue {
  add(promise: Promise<unknown>): void;
  numTotal(): number;
}

/** What is read of a shard's worker: BullMQ's `concurrency`, and three private fields (`knowsLoopOf`). */
type ShardWorker = Pick<Worker, 'concurrency'>;

export class ShardTakes {
  /** The jobs each shard's worker holds: taken, or running. */
  private readonly held: number[];
  /**
   * The jobs counted, by the job object BullMQ made when it took them (its `active` event, then
   * the processor and `processJob` get the same object): their shard. Neither the job id nor the
   * fetch's token tells two takes apart: a completion's fetch reuses its token, and a parked job
   * promoted meanwhile is taken again under the same id and token before the old run is done.
   */
  private readonly counted = new WeakMap<object, number>();
  private total = 0;
  /** Jobs taken by the process so far, and the count at each shard's last take. */
  private takes = 0;
  private readonly lastTake: number[];

  constructor(
    private readonly concurrency: number,
    private readonly workers: readonly ShardWorker[],
  ) {
    this.held = workers.map(() => 0);
    this.lastTake = workers.map(() => 0);
    this.update();
  }

  /** Slots of the process that no job holds: negative while jobs wait beyond the cap. */
  get free(): number {
    return this.concurrency - this.total;
  }

  /** Shard `index`'s worker took `job` (BullMQ's `active`). */
  taken(index: number, job: object): void {
    if (this.counted.has(job)) return;
    this.counted.set(job, index);
    this.held[index] = (this.held[index] ?? 0) + 1;
    this.total++;
    this.lastTake[index] = ++this.takes;
    this.update();
  }

  /** The run of `job` ended; its completion comes next. */
  runEnded(job: object): void {
    const index = this.uncount(job);
    if (index === undefined) return;
    const turn = this.nextTurn(index);
    this.update();
    // The slot this run frees goes to `turn` too. The ending shard's completion may refill its
    // own as well, one over the cap for a moment: then no shard takes until a run ends. Keeping
    // that completion from fetching instead lost the slot whenever the turn's fetch found
    // nothing (no run's end gave it back).
    if (turn !== undefined) wake(this.workers[turn]);
  }

  /** BullMQ is done with `job` (`onRunSettled`), its run or not. */
  settled(index: number, job: object): void {
    if (this.uncount(job) !== undefined) this.update();
    // A drained shard's completion fetched nothing in the slot it frees: another shard may.
    if (isDrained(this.workers[index])) this.wakeAnother(index);
  }

  /** Shard `index` found its queue empty (BullMQ's `drained`). */
  drained(index: number): void {
    this.wakeAnother(index);
  }

  private uncount(job: object): number | undefined {
    const index = this.counted.get(job);
    if (index === undefined) return undefined;
    this.counted.delete(job);
    this.held[index] = (this.held[index] ?? 1) - 1;
    this.total--;
    return index;
  }

  private update(): void {
    const free = this.free;
    this.workers.forEach((worker, index) => {
      worker.concurrency = Math.max(1, (this.held[index] ?? 0) + free);
    });
  }

  /**
   * The shard other than `index` whose loop waits for its own runs and that took no job in the
   * last `shards` takes (the longest ago first), if the process has a slot free to give it. A
   * drained shard (its last fetch found nothing, though jobs may have come since) waits for
   * `concurrency` × `shards` takes, so a shard with no work costs a fetch at most that often.
   * The turn counts as the shard's take, whatever its fetch finds.
   */
  private nextTurn(index: number): number | undefined {
    if (this.free <= 0) return undefined;
    let turn: number | undefined;
    this.workers.forEach((worker, other) => {
      if (other === index || isWaiting(worker)) return;
      const gap = isDrained(worker) ? this.concurrency * this.workers.length : this.workers.length;
      if (this.takes - (this.lastTake[other] ?? 0) < gap) return;
      const queue = mainLoopQueue(worker);
      if (!queue || queue.numTotal() < worker.concurrency) return;
      if (turn === undefined || (this.lastTake[other] ?? 0) < (this.lastTake[turn] ?? 0)) turn = other;
    });
    if (turn !== undefined) this.lastTake[turn] = this.takes;
    return turn;
  }

  /**
   * Wakes the first shard's loop after `index` (in turn) that has room and waits for one of its
   * jobs to end, one with work first. A loop waiting for its queue's marker is skipped: it
   * takes a job when one comes.
   */
  private wakeAnother(index: number): void {
    if (this.free <= 0) return;
    let drained: ShardWorker | undefined;
    for (let step = 1; step < this.workers.length; step++) {
      const worker = this.workers[(index + step) % this.workers.length];
      if (!worker || isWaiting(worker)) continue;
      const queue = mainLoopQueue(worker);
      if (!queue || queue.numTotal() >= worker.concurrency) continue;
      if (!isDrained(worker)) {
        wake(worker);
        return;
      }
      drained ??= worker;
    }
    // A drained loop woken waits for its queue's marker, and takes at once a job that came since.
    wake(drained);
  }
}

/**
 * Whether `worker` has the three private fields of BullMQ 6.7's main loop that `ShardTakes`
 * reads (`mainLoopQueue`, `waiting`, `drained`; set in its constructor). Without them a lowered
 * `concurrency` could never be woken back up and a shard could starve, so a worker built on a
 * BullMQ that lacks them takes up to the whole `concurrency` on every shard instead.
 */
export function knowsLoopOf(worker: ShardWorker): boolean {
  const fields = worker as unknown as Record<string, unknown>;
  return (
    Object.hasOwn(fields, 'mainLoopQueue') && Object.hasOwn(fields, 'waiting') && typeof fields.drained === 'boolean'
  );
}

/** The loop reads a resolved entry as "a job ended", and fetches again if it has room. */
function wake(worker: ShardWorker | undefined): void {
  if (worker) mainLoopQueue(worker)?.add(Promise.resolve());
}

function mainLoopQueue(worker: ShardWorker): MainLoopQueue | undefined {
  return (worker as unknown as { readonly mainLoopQueue?: MainLoopQueue | null }).mainLoopQueue ?? undefined;
}

/** Whether the loop waits for its queue's marker (BullMQ's private `waiting`, set meanwhile). */
function isWaiting(worker: ShardWorker): boolean {
  return (worker as unknown as { readonly waiting?: unknown }).waiting != null;
}

function isDrained(worker: ShardWorker | undefined): boolean {
  return (worker as unknown as { readonly drained?: boolean } | undefined)?.drained === true;
}
