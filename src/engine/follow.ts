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
 *
 * Followers share the engine's `FollowerRegistry`: one runtime subscription, and per task one
 * expiry timer and one re-read, however many followers follow it.
 */
import { type Caller, isVisibleTo } from './caller.js';
import { TaskError } from './errors.js';
import type { FollowerInbox, FollowerRegistry } from './follower-registry.js';
import type { TaskRecord } from './task.js';
import { isNewer } from './versions.js';

export { isNewer } from './versions.js';

/** What a follower needs of the engine (`TaskEngine` is one): its shared registry and a read as the caller. */
export interface FollowedEngine {
  readonly followers: FollowerRegistry;
  get(caller: Caller, taskId: string): Promise<TaskRecord>;
}

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

/** A first read that failed (the runtime is unreachable) is tried again after this long. */
const RETRY_FIRST_READ_MS = 1000;

interface Followed {
  last: TaskRecord | undefined;
  /** A first read waiting to be tried again. */
  retry: NodeJS.Timeout | undefined;
}

export class TaskFollower {
  private readonly followed = new Map<string, Followed>();
  private readonly inbox: FollowerInbox = {
    onEvent: (record) => {
      if (isVisibleTo(record, this.caller)) this.offer(record);
    },
    // A read as this caller would answer "not found" for a task it may not see.
    onRead: (record) => (isVisibleTo(record, this.caller) ? this.offer(record) : this.gone(record.taskId)),
    onGone: (taskId) => this.gone(taskId),
  };
  private closed = false;

  constructor(
    private readonly engine: FollowedEngine,
    private readonly caller: Caller,
    private readonly handlers: FollowHandlers,
  ) {
    // Joined before any read, so a change between a read and the subscription is not lost.
    engine.followers.join(this);
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
    this.followed.set(taskId, { last: known, retry: undefined });
    this.engine.followers.watch(taskId, this.inbox, known);
    if (known) return true;
    return this.readFirst(taskId);
  }

  /** Stops following `taskId` (its last word was delivered, or nobody wants it any more). */
  drop(taskId: string): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    clearTimeout(entry.retry);
    this.followed.delete(taskId);
    this.engine.followers.unwatch(taskId, this.inbox);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const taskId of [...this.followed.keys()]) this.drop(taskId);
    this.engine.followers.leave(this);
  }

  /** The first read, as this caller: its answer says whether the task is there for it at all. */
  private async readFirst(taskId: string): Promise<boolean> {
    let record: TaskRecord | undefined;
    try {
      record = await this.engine.get(this.caller, taskId);
    } catch (error) {
      if (!(error instanceof TaskError && error.code === 'TASK_NOT_FOUND')) {
        if (this.handlers.onUnavailable && this.followed.has(taskId)) {
          this.drop(taskId);
          this.handlers.onUnavailable(taskId, error);
          return false;
        }
        // The runtime is unreachable: try again shortly rather than declare the task gone.
        this.retryFirstRead(taskId);
        return false;
      }
    }
    if (!this.followed.has(taskId)) return record !== undefined;
    if (!record) {
      this.gone(taskId);
      return false;
    }
    this.engine.followers.note(record);
    this.offer(record);
    return true;
  }

  private retryFirstRead(taskId: string): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    clearTimeout(entry.retry);
    entry.retry = setTimeout(() => {
      entry.retry = undefined;
      void this.readFirst(taskId);
    }, RETRY_FIRST_READ_MS);
    entry.retry.unref?.();
  }

  private gone(taskId: string): void {
    const entry = this.followed.get(taskId);
    if (!entry) return;
    this.drop(taskId);
    this.handlers.onGone(taskId, entry.last);
  }

  private offer(record: TaskRecord): void {
    const entry = this.followed.get(record.taskId);
    if (!entry || (entry.last && !isNewer(record, entry.last))) return;
    const previous = entry.last;
    entry.last = record;
    this.handlers.onChange(record, previous);
  }
}
