/**
 * The followers of one engine, sharing what following costs: one runtime subscription for all of
 * them (held while any follower lives), and per followed task one expiry timer and one read
 * after a gap or at expiry, whatever the number of followers. Each change is handed only to the
 * followers of its task, so an event costs a map lookup, not a call per follower.
 *
 * It also notices expiry on runtimes that cannot report it themselves (a Redis key that reached
 * its TTL just disappears): when a followed task is found gone at or after its `expiresAt`, the
 * registry says so once (see `TaskFollowSource.expired`).
 *
 * And it does not trust the events alone: a followed task nothing was heard of for a while is
 * read again (`QUIET_RECHECK_MS`, doubling while the task stays quiet, up to
 * `MAX_QUIET_RECHECK_MS`). A runtime reports the gaps it knows of (a reconnect), but an event
 * can also be lost where it cannot tell (a Redis Cluster drops what it was forwarding over a bus
 * link that broke; a cluster client moves its subscription to another node by itself). Without
 * the re-read such a loss leaves a waiter waiting until the task expires.
 */

import type { TaskListener } from './runtime.js';
import { expiresAt, type TaskRecord } from './task.js';
import { isNewer } from './versions.js';

/** What the registry reads and listens to: the engine's runtime, seen through the engine. */
export interface TaskFollowSource {
  subscribe(listener: TaskListener, onGap: () => void): () => void;
  /** The task as stored (visibility is each follower's business), `undefined` when gone. */
  read(taskId: string): Promise<TaskRecord | undefined>;
  /** A followed task was found gone at or after its expiry; `last` is the newest version seen of it. */
  expired(last: TaskRecord): void;
}

/** What the registry hands a follower. */
export interface FollowerInbox {
  /** A version from the runtime's events (a change anyone may have made). */
  onEvent(record: TaskRecord): void;
  /** A version read again (after a gap, at expiry, or after a failed read). */
  onRead(record: TaskRecord): void;
  /** The task is gone (expired or deleted). */
  onGone(taskId: string): void;
}

/** setTimeout's limit; longer TTLs are checked in steps of this. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * Read this long after the expiry instant: Redis expires a key at its millisecond, and clocks of
 * the processes sharing it differ by a little. Short enough that a waiter hears within a second.
 */
const EXPIRY_CHECK_SLACK_MS = 250;
/** A read that failed (the runtime is unreachable) is tried again after this long. */
const RETRY_READ_MS = 1000;
/**
 * A followed task with no event for this long is read again, in case its event was lost; each
 * re-read that finds nothing new doubles the wait, up to `MAX_QUIET_RECHECK_MS`, and an event
 * brings it back to this. A task that reports progress now and then is never read again; a
 * quiet one costs one read (however many follow it) at 2, 4, 8… s, then one a minute.
 */
export const QUIET_RECHECK_MS = 2000;
/** The longest wait between two re-reads of a quiet followed task. */
export const MAX_QUIET_RECHECK_MS = 60_000;

interface Watch {
  readonly followers: Set<FollowerInbox>;
  /** The newest version seen of the task: its expiry arms the timer. */
  latest: TaskRecord | undefined;
  /** The expiry instant the armed timer checks (`undefined`: no expiry check armed). */
  checkAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
  /** When the task was last heard of (an event, or a re-read that found a newer version). */
  heardAt: number;
  /** How long the task may stay quiet before the next re-read. */
  quietMs: number;
  recheck: NodeJS.Timeout | undefined;
  /** When `recheck` fires. */
  recheckAt: number;
}

/** A follower as the registry counts it. */
export interface RegistryMember {
  /** How many tasks it follows. */
  readonly size: number;
}

export class FollowerRegistry {
  private readonly members = new Set<RegistryMember>();
  private readonly watches = new Map<string, Watch>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly source: TaskFollowSource,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Live followers (for `waiterStats`). */
  get size(): number {
    return this.members.size;
  }

  /** Task ids followed by at least one follower. */
  get watchedTasks(): number {
    return this.watches.size;
  }

  /** Task ids followed, counted once per follower that follows them. */
  followedTasks(): number {
    let followed = 0;
    for (const member of this.members) followed += member.size;
    return followed;
  }

  /** Whether the registry holds its runtime subscription (it does while any follower lives). */
  get subscribed(): boolean {
    return this.unsubscribe !== undefined;
  }

  /**
   * A follower starts: from here on no change is missed, since the shared subscription is open
   * before the follower's first read.
   */
  join(member: RegistryMember): void {
    this.members.add(member);
    this.unsubscribe ??= this.source.subscribe(
      (event) => this.deliver(event.record),
      () => this.refreshAll(),
    );
  }

  /** A follower closed (after `unwatch` of its tasks); the last one closes the subscription. */
  leave(member: RegistryMember): void {
    this.members.delete(member);
    if (this.members.size > 0 || !this.unsubscribe) return;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    unsubscribe();
  }

  watch(taskId: string, inbox: FollowerInbox, known?: TaskRecord): void {
    let watch = this.watches.get(taskId);
    if (!watch) {
      watch = {
        followers: new Set(),
        latest: undefined,
        checkAt: undefined,
        timer: undefined,
        heardAt: this.clock(),
        quietMs: QUIET_RECHECK_MS,
        recheck: undefined,
        recheckAt: 0,
      };
      this.watches.set(taskId, watch);
      this.armRecheck(taskId, watch, QUIET_RECHECK_MS);
    }
    watch.followers.add(inbox);
    if (known) this.note(known);
  }

  unwatch(taskId: string, inbox: FollowerInbox): void {
    const watch = this.watches.get(taskId);
    if (!watch?.followers.delete(inbox) || watch.followers.size > 0) return;
    this.forget(taskId, watch);
  }

  /** A version of a watched task seen anywhere (a follower's first read): its expiry is checked. */
  note(record: TaskRecord): void {
    const watch = this.watches.get(record.taskId);
    if (!watch) return;
    // Versions only move forward, and the expiry of the newest is the one that counts.
    if (!watch.latest || record.lastUpdatedAt >= watch.latest.lastUpdatedAt) watch.latest = record;
    const at = expiresAt(watch.latest);
    if (!Number.isFinite(at)) {
      this.disarm(watch);
      return;
    }
    if (watch.checkAt === at) return;
    this.arm(record.taskId, watch, Math.max(0, at - this.clock()) + EXPIRY_CHECK_SLACK_MS, at);
  }

  /** Reads every watched task again: after a gap in the runtime's events. */
  refreshAll(): void {
    for (const taskId of [...this.watches.keys()]) void this.refresh(taskId);
  }

  private deliver(record: TaskRecord): void {
    const watch = this.watches.get(record.taskId);
    if (!watch) return;
    this.heard(record.taskId, watch);
    this.note(record);
    each(watch.followers, (inbox) => inbox.onEvent(record));
  }

  /** One read for every follower of the task. */
  private async refresh(taskId: string): Promise<void> {
    let record: TaskRecord | undefined;
    try {
      record = await this.source.read(taskId);
    } catch {
      // The runtime is unreachable: try again shortly rather than declare the task gone.
      const watch = this.watches.get(taskId);
      if (watch) this.arm(taskId, watch, RETRY_READ_MS);
      return;
    }
    const watch = this.watches.get(taskId);
    if (!watch) return;
    if (record) {
      // A version the events did not bring: they may be losing more, so keep looking often.
      if (watch.latest && isNewer(record, watch.latest)) {
        this.heard(taskId, watch);
      }
      this.note(record);
      each(watch.followers, (inbox) => inbox.onRead(record));
      return;
    }
    const last = watch.latest;
    this.forget(taskId, watch);
    if (last && this.clock() >= expiresAt(last)) this.source.expired(last);
    each(watch.followers, (inbox) => inbox.onGone(taskId));
  }

  /**
   * Reads the task again in `delayMs`. `expiry`: the expiry instant this check is for (a retry
   * after a failed read has none, so the next version seen arms the expiry check again).
   */
  private arm(taskId: string, watch: Watch, delayMs: number, expiry?: number): void {
    this.disarm(watch);
    const delay = Math.min(MAX_TIMER_MS, delayMs);
    watch.checkAt = delay === delayMs ? expiry : undefined;
    watch.timer = setTimeout(() => {
      watch.timer = undefined;
      watch.checkAt = undefined;
      void this.refresh(taskId);
    }, delay);
    watch.timer.unref?.();
  }

  /**
   * The task's events are flowing: the next re-read waits the shortest quiet time again. The
   * timer moves only when a long quiet spell had pushed it further out (once per spell).
   */
  private heard(taskId: string, watch: Watch): void {
    watch.heardAt = this.clock();
    watch.quietMs = QUIET_RECHECK_MS;
    if (watch.recheckAt <= watch.heardAt + QUIET_RECHECK_MS) return;
    clearTimeout(watch.recheck);
    this.armRecheck(taskId, watch, QUIET_RECHECK_MS);
  }

  /**
   * Reads the task again once it has been quiet for `watch.quietMs`. The timer is not moved on
   * every event (a busy task would pay a timer per event): when it fires early, it waits out
   * the rest of the quiet time.
   */
  private armRecheck(taskId: string, watch: Watch, delayMs: number): void {
    watch.recheckAt = this.clock() + delayMs;
    watch.recheck = setTimeout(() => {
      watch.recheck = undefined;
      if (this.watches.get(taskId) !== watch) return;
      const quietFor = this.clock() - watch.heardAt;
      if (quietFor < watch.quietMs) {
        this.armRecheck(taskId, watch, watch.quietMs - quietFor);
        return;
      }
      watch.heardAt = this.clock();
      watch.quietMs = Math.min(watch.quietMs * 2, MAX_QUIET_RECHECK_MS);
      this.armRecheck(taskId, watch, watch.quietMs);
      void this.refresh(taskId);
    }, delayMs);
    watch.recheck.unref?.();
  }

  /** The task is followed no more: its timers go with it. */
  private forget(taskId: string, watch: Watch): void {
    clearTimeout(watch.timer);
    clearTimeout(watch.recheck);
    this.watches.delete(taskId);
  }

  private disarm(watch: Watch): void {
    clearTimeout(watch.timer);
    watch.timer = undefined;
    watch.checkAt = undefined;
  }
}

/**
 * Hands something to each follower of a task, as separate runtime listeners would have: one
 * whose handler throws does not keep it from the others.
 */
function each(followers: ReadonlySet<FollowerInbox>, hand: (inbox: FollowerInbox) => void): void {
  for (const inbox of [...followers]) {
    try {
      hand(inbox);
    } catch {
      // The follower's own business; the others still hear.
    }
  }
}
