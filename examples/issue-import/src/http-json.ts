/**
 * GET a JSON document from an HTTP API the way a task should: bounded retries with backoff on
 * what is worth retrying (network errors, timeouts, 429 and 5xx, honouring `Retry-After`), an
 * error at once on what is not (other 4xx), a timeout per attempt, and the task's AbortSignal
 * on every wait, so a cancel stops it mid-request or mid-backoff.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** Wait before the second attempt; doubled for each one after, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Each attempt's own time limit. */
  readonly timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 250, maxDelayMs: 5_000, timeoutMs: 10_000 };

/** An answer the API gave that retrying will not change (a 4xx other than 429), or the last failure. */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface Fetched<T> {
  readonly body: T;
  /** Attempts that failed before this one succeeded. */
  readonly retries: number;
}

export async function getJson<T>(
  url: string,
  signal: AbortSignal,
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<Fetched<T>> {
  let lastProblem = '';
  for (let attempt = 1; attempt <= policy.attempts; attempt++) {
    let waitMs = Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(policy.timeoutMs)]),
      });
      if (response.ok) return { body: (await response.json()) as T, retries: attempt - 1 };
      await response.body?.cancel();
      lastProblem = `HTTP ${response.status} from ${url}`;
      if (response.status !== 429 && response.status < 500) throw new HttpError(lastProblem, response.status);
      waitMs = retryAfterMs(response.headers.get('retry-after')) ?? waitMs;
    } catch (error) {
      // Cancelled by the caller: stop now. (A timeout of one attempt is retried like a network error.)
      signal.throwIfAborted();
      if (error instanceof HttpError) throw error;
      lastProblem = `${(error as Error).message} (${url})`;
    }
    if (attempt < policy.attempts) await sleep(Math.min(waitMs, policy.maxDelayMs), undefined, { signal });
  }
  throw new HttpError(`gave up after ${policy.attempts} attempts: ${lastProblem}`, undefined);
}

/** `Retry-After` in seconds (dates are rare from APIs and ignored); undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header) * 1000;
}
