/**
 * The followers of one engine, sharing what following costs: one runtime subscription for all of
 * them (held while any follower lives), and per followed task one expiry timer and one read
 * after a gap or at expiry, whatever the number of followers. Each change is handed only to the
 * followers of its task, so an event costs a map lookup, not a call per follower.
 *
 * It also notices expiry on runtimes that cannot report it themselves (a Redis key that reached
 * its TTL just disappears): when a followed task is found gone at or after its `expiresAt`, the
 * registry says so once (see `TaskFollowSource.expired`).
 */
import type { TaskListener } from './runtime.js';
import { expiresAt, type TaskRecord } from './task.js';

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

interface Watch {
  readonly followers: Set<FollowerInbox>;
  /** The newest version seen of the task: its expiry arms the timer. */
  latest: TaskRecord | undefined;
  /** The expiry instant the armed timer checks (`undefined`: no expiry check armed). */
  checkAt: number | undefined;
  timer: NodeJS.Timeout | undefined;
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
      watch = { followers: new Set(), latest: undefined, checkAt: undefined, timer: undefined };
      this.watches.set(taskId, watch);
    }
    watch.followers.add(inbox);
    if (known) this.note(known);
  }

  unwatch(taskId: string, inbox: FollowerInbox): void {
    const watch = this.watches.get(taskId);
    if (!watch?.followers.delete(inbox) || watch.followers.size > 0) return;
    clearTimeout(watch.timer);
    this.watches.delete(taskId);
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
      this.note(record);
      each(watch.followers, (inbox) => inbox.onRead(record));
      return;
    }
    const last = watch.latest;
    clearTimeout(watch.timer);
    this.watches.delete(taskId);
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
