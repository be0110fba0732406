/**
 * What a route needs of the rate limits, and the refusal it gets back. The limiter itself
 * (`src/host/rate-limits.ts`) keeps its counters in memory or Redis; routes beside the host,
 * such as the dashboard's, see only this.
 */
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { CallerIdentity } from './client-address.js';

/** The two budgets: creating tasks, and reading or acting on existing ones. */
export type RateKind = 'create' | 'read';

/** Who a request is counted against: its principal, else the address it comes from. */
export type RateSubject = CallerIdentity;

/** Counts requests against a subject's budget; resolves with the refusal when over it. */
export interface RateBudget {
  consume(subject: RateSubject, kind: RateKind, points?: number): Promise<RateLimitedError | undefined>;
}

/** Over a rate limit: HTTP answers 429 with `Retry-After`; stdio gets this error, the delay in `data`. */
export class RateLimitedError extends JsonRpcError {
  override readonly name: string = 'RateLimitedError';
  constructor(
    limit: string,
    value: number,
    readonly retryAfterMs: number,
    kind: RateKind,
  ) {
    super(
      JsonRpcErrorCode.RateLimited,
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
