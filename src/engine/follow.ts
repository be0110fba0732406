/**
 * Following tasks until their last word: what a blocking `tasks/result`, a 2026 listen stream
 * and 2025 status push all need, in one place.
 *
 * Runtime events alone are not enough, for two reasons the runtimes cannot fix on their own:
 *
 * - **Gaps.** Pub/sub has no replay: changes published while a process's event connection was
 *   down are lost. After a gap every followed task is read again and what changed is delivered.
 * - **Expiry.** A record that reaches its TTL just disappears (Redis key expiry publishes
 *   nothing unless keyspace notifications are on, which managed Redis leaves off; the memory
 *   runtime forgets silently). So each followed task gets a timer at its `expiresAt`; when it
 *   fires the task is read again, from whichever process follows it, and a task that is gone
 *   is reported gone.
 *
 * Each version of a task is delivered at most once and never after a newer one, whether it
 * came by event, by a re-read after a gap, or by the expiry check, so no client gets a second
 * terminal notification.
 */
import type { TaskEngine } from './engine.js';
import { type Caller, isVisibleTo } from './engine.js';
import { TaskError } from './errors.js';
import { expiresAt, type TaskRecord } from './task.js';

export interface FollowHandlers {
  /** A version of a followed task newer than any delivered before (`previous`: the last delivered). */
  readonly onChange: (record: TaskRecord, previous: TaskRecord | undefined) => void;
  /** The task is gone (expired, deleted, or never visible to the caller); it is no longer followed. */
  readonly onGone: (taskId: string, last: TaskRecord | undefined) => void;
  /**
   * The first read of a task failed for another reason (the runtime is unreachable). Without
   * this handler the read is retried; later reads (gap, expiry) are always retried.
   */
  readonly onUnavailable?: (taskId: string, error: unknown) => void;
}

/** setTimeout's limit; longer TTLs are checked in steps of this. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * Read this long after the expiry instant: Redis expires a key at its millisecond, and clocks of
 * the processes sharing it differ by a little. Short enough that a waiter hears within a second.
 */
const EXPIRY_CHECK_SLACK_MS = 250;

interface Followed {
  last: TaskRecord | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class TaskFollower {
  private readonly followed = new Map<string, Followed>();
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly engine: TaskEngine,
    private readonly caller: Caller,
    private readonly handlers: FollowHandlers,
    private readonly clock: () => number = Date.now,
  ) {
    // Subscribed before any read, so a change between a read and the subscription is not lost.
    this.unsubscribe = engine.subscribe(
      ({ record }) => {
        if (this.followed.has(record.taskId) && isVisibleTo(record, caller)) this.offer(record);
      },
      () => this.refreshAll(),
    );
    engine.followers.add(this);
  }

  /** How many tasks this follower still follows. */
  get size(): number {
    return this.followed.size;
  }

  has(taskId: string): boolean {
    return this.followed.has(taskId);
  }

  /**
   * Starts following `taskId`. With `known` (a version the caller already has, e.g. just read),
   * later versions only are delivered; without it, the task is read and its current state
   * delivered (or `onGone` / `onUnavailable` called). Resolves once that first read is done:
   * true when the task was found.
   */
  async follow(taskId: string, known?: TaskRecord): Promise<boolean> {
    if (this.closed || this.followed.has(taskId)) return this.followed.has(taskId);
    this.followed.set(taskId, { last: known, timer: undefined });
    if (known) {
      this.scheduleExpiryCheck(taskId, known);
      return true;
    }
    return this.refresh(taskId, true);
  }

  /** Stops following `taskId` (its last word was delivered, or nobody wants it any more). */
  drop(taskId: string): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.followed.delete(taskId);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    for (const entry of this.followed.values()) clearTimeout(entry.timer);
    this.followed.clear();
    this.engine.followers.delete(this);
  }

  /** Reads every followed task again: after a gap in the runtime's events. */
  refreshAll(): void {
    for (const taskId of [...this.followed.keys()]) void this.refresh(taskId);
  }

  /** Reads the task and delivers what is new; true when it was found. */
  private async refresh(taskId: string, first = false): Promise<boolean> {
    let record: TaskRecord | undefined;
    try {
      record = await this.engine.get(this.caller, taskId);
    } catch (error) {
      if (!(error instanceof TaskError && error.code === 'TASK_NOT_FOUND')) {
        if (first && this.handlers.onUnavailable && this.followed.has(taskId)) {
          this.drop(taskId);
          this.handlers.onUnavailable(taskId, error);
          return false;
        }
        // The runtime is unreachable: try again shortly rather than declare the task gone.
        this.retryLater(taskId);
        return false;
      }
    }
    const entry = this.followed.get(taskId);
    if (!entry) return record !== undefined;
    if (!record) {
      this.drop(taskId);
      this.handlers.onGone(taskId, entry.last);
      return false;
    }
    this.offer(record);
    return true;
  }

  private offer(record: TaskRecord): void {
    const entry = this.followed.get(record.taskId);
    if (!entry) return;
    if (entry.last && !isNewer(record, entry.last)) {
      // Nothing new; but the TTL may have changed (a SEP-1686 task ending), so re-arm its check.
      if (entry.timer === undefined) this.scheduleExpiryCheck(record.taskId, entry.last);
      return;
    }
    const previous = entry.last;
    entry.last = record;
    this.scheduleExpiryCheck(record.taskId, record);
    this.handlers.onChange(record, previous);
  }

  private scheduleExpiryCheck(taskId: string, record: TaskRecord): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const at = expiresAt(record);
    if (!Number.isFinite(at)) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - this.clock()) + EXPIRY_CHECK_SLACK_MS);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      void this.refresh(taskId);
    }, delay);
    entry.timer.unref?.();
  }

  private retryLater(taskId: string): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      void this.refresh(taskId);
    }, 1000);
    entry.timer.unref?.();
  }
}

/**
 * Whether `candidate` is a later version than `known`. Versions of one task only move forward
 * in `lastUpdatedAt`; two writes in the same millisecond are told apart by their content, and a
 * terminal version is never followed by another (terminal is sticky).
 */
function isNewer(candidate: TaskRecord, known: TaskRecord): boolean {
  if (candidate.lastUpdatedAt !== known.lastUpdatedAt) return candidate.lastUpdatedAt > known.lastUpdatedAt;
  if (known.status !== 'working' && known.status !== 'input_required') return false;
  return JSON.stringify(candidate) !== JSON.stringify(known);
}
