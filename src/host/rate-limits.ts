/**
 * Rate limits per principal on task creation and task reads. On Redis the counters live in
 * Redis (every server process of the app shares them); otherwise in this process's memory.
 * Each kind is a steady rate plus a burst (`rate-limiter-flexible`'s bursty limiter: the
 * per-second budget, then a larger budget per ten seconds to absorb spikes). A caller nothing
 * identifies (HTTP without auth) is counted by the address it comes from, so one noisy client
 * does not spend everyone's budget. On Redis, a process takes the steady budget in leases of a
 * tenth of the rate (see `Leases`), so a request costs a round trip once per lease.
 */
import {
  BurstyRateLimiter,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { identityKey } from '../http/client-address.js';
import { type RateBudget, type RateKind, RateLimitedError, type RateSubject } from '../http/rate-budget.js';
import { isPlainObject } from '../protocol/params.js';
import { type RedisClient, whenReady } from '../runtime/bullmq/index.js';
import type { TaskServerLimits } from './limits.js';

/**
 * Methods that read or act on existing tasks; `tools/call` is the creation budget. Cancelling
 * and deleting count too: each costs the runtime a read and a write.
 */
const READ_METHODS = new Set([
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/update',
  'tasks/cancel',
  'tasks/delete',
  'subscriptions/listen',
]);

/**
 * `readTools`: tools whose calls read or act on an existing task (the companion tools of
 * callers without tasks, `task_status` and the rest): they count as the task methods they
 * stand for, not as creations.
 */
export function rateKindOf(method: unknown, tool?: unknown, readTools?: ReadonlySet<string>): RateKind | undefined {
  if (method === 'tools/call') return typeof tool === 'string' && readTools?.has(tool) ? 'read' : 'create';
  return typeof method === 'string' && READ_METHODS.has(method) ? 'read' : undefined;
}

/**
 * What one JSON-RPC request costs: one of its kind, except a task listen, which costs one read
 * per task id it names (what one round of `tasks/get` on them would cost; its first reads are
 * exactly those), so following tasks by listen is never a way around the read budget.
 */
export function rateCostOf(
  message: Record<string, unknown>,
  readTools?: ReadonlySet<string>,
): { kind: RateKind; points: number } | undefined {
  const tool = isPlainObject(message.params) ? message.params.name : undefined;
  const kind = rateKindOf(message.method, tool, readTools);
  if (!kind) return undefined;
  if (message.method !== 'subscriptions/listen' || !isPlainObject(message.params)) return { kind, points: 1 };
  const notifications = message.params.notifications;
  const taskIds = isPlainObject(notifications) ? notifications.taskIds : undefined;
  return { kind, points: Array.isArray(taskIds) ? Math.max(1, taskIds.length) : 1 };
}

/**
 * How many tasks one caller may poll at once, each at the suggested interval, within its steady
 * read rate: the suggestion never asks for polls faster than `POLLED_AT_ONCE` tasks could keep
 * up together (see `comfortablePollMs`).
 */
export const POLLED_AT_ONCE = 10;

/**
 * The shortest poll interval the server suggests as far as the read rate limit goes: one
 * task's polls take at most a `POLLED_AT_ONCE`-th of `readsPerSecond` (20 ms at the default
 * 500 reads per second, below the default `minPollIntervalMs` of 100).
 */
export function comfortablePollMs(limits: Pick<TaskServerLimits, 'readsPerSecond'>): number {
  return Math.ceil((POLLED_AT_ONCE * 1000) / limits.readsPerSecond);
}

/** The window of the burst budget: `burst` requests per this many seconds on top of the steady rate. */
const BURST_WINDOW_SECONDS = 10;

/** A lease is this fraction of the per-second rate (so at most a tenth of it sits unused in one process)… */
const LEASE_FRACTION = 10;
/** …and never more than this many points. */
const MAX_LEASE = 100;
/** Leases kept at most; past it, expired ones are dropped (each is a few bytes per caller). */
const MAX_LEASES = 10_000;

/**
 * Points of the steady rate one process takes from Redis at once for one caller and kind, on
 * the Redis store: `perSecond / 10`, at most 100, at least 1 (1 is no lease: a round trip per
 * request, as without leases).
 */
export function leaseSize(perSecond: number): number {
  return Math.max(1, Math.min(MAX_LEASE, Math.floor(perSecond / LEASE_FRACTION)));
}

/**
 * Points of the steady budget this process took from Redis and has not used yet, per caller and
 * kind, each valid until the end of the one-second window Redis charged it to. Points are
 * charged before they are used and never used after their window, so N processes together
 * never admit more than the limit in a window; what a process holds unused (under one lease)
 * is refused to the caller's requests on other processes until the window ends.
 */
class Leases {
  private readonly leases = new Map<string, { left: number; until: number }>();

  /** Takes `points` from the lease of `key`; false when it has not that many left or has expired. */
  take(key: string, points: number, now: number): boolean {
    const lease = this.leases.get(key);
    if (!lease || lease.until <= now || lease.left < points) return false;
    lease.left -= points;
    return true;
  }

  /** A lease refused for `key` in this window: no more asks for one until `until`. */
  blocked(key: string, now: number): boolean {
    const lease = this.leases.get(key);
    return lease !== undefined && lease.left < 0 && lease.until > now;
  }

  /** `left` points for `key` until `until`; `left` -1 marks the window as refused (see `blocked`). */
  grant(key: string, left: number, until: number, now: number): void {
    if (this.leases.size >= MAX_LEASES && !this.leases.has(key)) {
      for (const [other, lease] of this.leases) if (lease.until <= now) this.leases.delete(other);
      // Still full of live leases: the oldest goes (its points are lost to this window, never overused).
      if (this.leases.size >= MAX_LEASES) this.leases.delete(this.leases.keys().next().value as string);
    }
    this.leases.set(key, { left, until });
  }
}

export class RateLimits implements RateBudget {
  private readonly limiters: Record<RateKind, BurstyRateLimiter>;
  /** On Redis: the steady limiters alone, which leases are taken from (see `Leases`). */
  private readonly steady: Partial<Record<RateKind, RateLimiterAbstract>> = {};
  private readonly leaseSizes: Record<RateKind, number>;
  private readonly leases = new Leases();

  constructor(
    private readonly limits: Pick<
      TaskServerLimits,
      'createsPerSecond' | 'createBurst' | 'readsPerSecond' | 'readBurst'
    >,
    private readonly store?: { readonly redis: RedisClient; readonly prefix: string },
    private readonly clock: () => number = Date.now,
  ) {
    const make = (kind: RateKind, points: number, duration: number, label: string): RateLimiterAbstract =>
      store
        ? new RateLimiterRedis({
            storeClient: store.redis,
            keyPrefix: `${store.prefix}:rate:${kind}:${label}`,
            points,
            duration,
          })
        : new RateLimiterMemory({ keyPrefix: `${kind}:${label}`, points, duration });
    const steady = {
      create: make('create', limits.createsPerSecond, 1, 'steady'),
      read: make('read', limits.readsPerSecond, 1, 'steady'),
    };
    this.limiters = {
      create: new BurstyRateLimiter(steady.create, make('create', limits.createBurst, BURST_WINDOW_SECONDS, 'burst')),
      read: new BurstyRateLimiter(steady.read, make('read', limits.readBurst, BURST_WINDOW_SECONDS, 'burst')),
    };
    // In memory a request costs no round trip: nothing to lease.
    if (store) this.steady = steady;
    this.leaseSizes = store
      ? { create: leaseSize(limits.createsPerSecond), read: leaseSize(limits.readsPerSecond) }
      : { create: 1, read: 1 };
  }

  /**
   * Counts `points` requests of `kind` for `subject` (at most the burst: a request the burst
   * cannot hold would be refused for ever). Resolves with the refusal when over the limit; a
   * store failure lets the request through, since the limits protect the service and must not
   * take it down with Redis.
   */
  async consume(subject: RateSubject, kind: RateKind, points = 1): Promise<RateLimitedError | undefined> {
    const burst = kind === 'create' ? this.limits.createBurst : this.limits.readBurst;
    const key = identityKey(subject);
    const cost = Math.max(1, Math.min(points, burst));
    try {
      await this.storeReady();
      if (await this.leased(kind, key, cost)) return undefined;
      await this.limiters[kind].consume(key, cost);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) return undefined;
      const retryAfterMs = Math.max(1, Math.ceil(error.msBeforeNext));
      const [limit, value] =
        kind === 'create'
          ? (['createsPerSecond', this.limits.createsPerSecond] as const)
          : (['readsPerSecond', this.limits.readsPerSecond] as const);
      return new RateLimitedError(limit, value, retryAfterMs, kind);
    }
  }

  /**
   * Admits `cost` from this process's lease of the steady budget, taking a new lease (one round
   * trip for `leaseSize` requests) when it ran out. False: no lease applies (none on this store,
   * or the caller's steady budget cannot hold a lease in this window); ask as without leases.
   */
  private async leased(kind: RateKind, key: string, cost: number): Promise<boolean> {
    const steady = this.steady[kind];
    const size = this.leaseSizes[kind];
    if (!steady || size <= 1) return false;
    const leaseKey = `${kind}:${key}`;
    const now = this.clock();
    if (this.leases.take(leaseKey, cost, now)) return true;
    if (this.leases.blocked(leaseKey, now)) return false;
    const ask = Math.max(cost, size);
    try {
      const granted = await steady.consume(key, ask);
      this.leases.grant(leaseKey, ask - cost, now + granted.msBeforeNext, now);
      return true;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      // Fewer than a lease left in this window: give the ask back (Redis counted it) and count
      // one request at a time until the window ends, as without leases.
      this.leases.grant(leaseKey, -1, now + error.msBeforeNext, now);
      await steady.reward(key, ask).catch(() => {});
      return false;
    }
  }

  /** One shared `ready` listener for every request waiting here: one each tripped Node's leak warning under a burst. */
  private async storeReady(): Promise<void> {
    const redis = this.store?.redis;
    if (!redis || redis.status === 'ready') return;
    await whenReady(redis, AbortSignal.timeout(STORE_READY_WAIT_MS)).catch(() => {});
  }
}

/** Right after start the Redis connection may still be opening: wait for it briefly rather than count nothing. */
const STORE_READY_WAIT_MS = 1000;
