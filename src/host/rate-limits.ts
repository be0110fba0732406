/**
 * Rate limits per principal on task creation and task reads. On Redis the counters live in
 * Redis (every server process of the app shares them); otherwise in this process's memory.
 * Each kind is a steady rate plus a burst (`rate-limiter-flexible`'s bursty limiter: the
 * per-second budget, then a larger budget per ten seconds to absorb spikes).
 */
import {
  BurstyRateLimiter,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { ErrorCode, RpcError } from '../protocol/rpc-error.js';
import type { RedisClient } from '../runtime/bullmq/index.js';
import type { TaskServerLimits } from './limits.js';

export type RateKind = 'create' | 'read';

/** Methods that read tasks; `tools/call` is the creation budget. */
const READ_METHODS = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/update']);

export function rateKindOf(method: unknown): RateKind | undefined {
  if (method === 'tools/call') return 'create';
  return typeof method === 'string' && READ_METHODS.has(method) ? 'read' : undefined;
}

/** The window of the burst budget: `burst` requests per this many seconds on top of the steady rate. */
const BURST_WINDOW_SECONDS = 10;

export class RateLimits {
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
   * Counts one request of `kind` for `principal` (anonymous callers share one budget).
   * Resolves with the refusal when over the limit; a store failure lets the request through,
   * since the limits protect the service and must not take it down with Redis.
   */
  async consume(principal: string | null, kind: RateKind): Promise<RateLimited | undefined> {
    try {
      await this.storeReady();
      await this.limiters[kind].consume(principal === null ? 'anonymous' : `p:${principal}`);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) return undefined;
      const retryAfterMs = Math.max(1, Math.ceil(error.msBeforeNext));
      const [limit, value] =
        kind === 'create'
          ? (['createsPerSecond', this.limits.createsPerSecond] as const)
          : (['readsPerSecond', this.limits.readsPerSecond] as const);
      return new RateLimited(limit, value, retryAfterMs, kind);
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

/** Over a rate limit: HTTP answers 429 with `Retry-After`; stdio gets this error, the delay in `data`. */
export class RateLimited extends RpcError {
  constructor(
    limit: string,
    value: number,
    readonly retryAfterMs: number,
    kind: RateKind,
  ) {
    super(
      ErrorCode.RateLimited,
      `Too many task ${kind === 'create' ? 'creations' : 'reads'}: the limit is ${value} per second (${limit}); retry in ${retryAfterMs} ms`,
      { limit, value, retryAfterMs },
    );
  }

  toResponse(id: unknown): Response {
    return Response.json(
      { jsonrpc: '2.0', id: typeof id === 'string' || typeof id === 'number' ? id : null, error: this.toJSON() },
      { status: 429, headers: { 'retry-after': String(Math.ceil(this.retryAfterMs / 1000)) } },
    );
  }
}
