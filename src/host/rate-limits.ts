/**
 * Rate limits per principal on task creation and task reads. On Redis the counters live in
 * Redis (every server process of the app shares them); otherwise in this process's memory.
 * Each kind is a steady rate plus a burst (`rate-limiter-flexible`'s bursty limiter: the
 * per-second budget, then a larger budget per ten seconds to absorb spikes). A caller nothing
 * identifies (HTTP without auth) is counted by the address it comes from, so one noisy client
 * does not spend everyone's budget.
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
import type { RedisClient } from '../runtime/bullmq/index.js';
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

export class RateLimits implements RateBudget {
  private readonly limiters: Record<RateKind, BurstyRateLimiter>;

  constructor(
    private readonly limits: Pick<
      TaskServerLimits,
      'createsPerSecond' | 'createBurst' | 'readsPerSecond' | 'readBurst'
    >,
    private readonly store?: { readonly redis: RedisClient; readonly prefix: string },
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
    this.limiters = {
      create: new BurstyRateLimiter(
        make('create', limits.createsPerSecond, 1, 'steady'),
        make('create', limits.createBurst, BURST_WINDOW_SECONDS, 'burst'),
      ),
      read: new BurstyRateLimiter(
        make('read', limits.readsPerSecond, 1, 'steady'),
        make('read', limits.readBurst, BURST_WINDOW_SECONDS, 'burst'),
      ),
    };
  }

  /**
   * Counts `points` requests of `kind` for `subject` (at most the burst: a request the burst
   * cannot hold would be refused for ever). Resolves with the refusal when over the limit; a
   * store failure lets the request through, since the limits protect the service and must not
   * take it down with Redis.
   */
  async consume(subject: RateSubject, kind: RateKind, points = 1): Promise<RateLimitedError | undefined> {
    const burst = kind === 'create' ? this.limits.createBurst : this.limits.readBurst;
    try {
      await this.storeReady();
      await this.limiters[kind].consume(identityKey(subject), Math.max(1, Math.min(points, burst)));
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

  private async storeReady(): Promise<void> {
    const redis = this.store?.redis;
    if (!redis || redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, STORE_READY_WAIT_MS);
      redis.once('ready', done);
    });
  }
}

/** Right after start the Redis connection may still be opening: wait for it briefly rather than count nothing. */
const STORE_READY_WAIT_MS = 1000;
