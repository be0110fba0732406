/**
 * Retries of a method's own failures and time limits on each attempt: the policy a tool
 * declares (`@Task({ retry, timeoutMs })`), the delay before the next attempt, and the words a
 * task shows while it waits. Pure data and arithmetic: the tool layer decides that an attempt
 * failed, the runtimes schedule the next one without holding a worker slot.
 */

/** How a tool's method is run again after it throws (`@Task({ retry })`), with every default filled in. */
export interface RetryPolicy {
  /** Runs in all, the first one included (1: no retry). */
  readonly attempts: number;
  /** `exponential`: the delay doubles after each failure; `fixed`: always `delayMs`. */
  readonly backoff: 'exponential' | 'fixed';
  /** The delay before the second attempt, in ms. */
  readonly delayMs: number;
  /** The longest delay between two attempts, in ms. */
  readonly maxDelayMs: number;
  /** Spread each delay at random over its upper half, so tasks that failed together do not retry together. */
  readonly jitter: boolean;
}

/** The values `@Task({ retry: {} })` leaves out get. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 3,
  backoff: 'exponential',
  delayMs: 1000,
  maxDelayMs: 60_000,
  jitter: false,
};

/** What may be written in `@Task({ retry })`: every field optional. */
export type RetryOptions = Partial<RetryPolicy>;

/** The backoff kinds `retry.backoff` takes. */
export const RETRY_BACKOFFS: readonly RetryPolicy['backoff'][] = ['exponential', 'fixed'];

/**
 * The problems of a retry policy and a timeout, each naming the field (empty when valid): the
 * generator reports them at the decorator, the registry refuses a hand-written manifest with them.
 */
export function retryPolicyProblems(retry: RetryOptions | undefined, timeoutMs?: number): string[] {
  const problems: string[] = [];
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    problems.push(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  if (retry === undefined) return problems;
  const { attempts, backoff, delayMs, maxDelayMs } = retry;
  if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 1)) {
    problems.push(
      `retry.attempts must be a whole number of 1 or more (it counts the first run), got ${String(attempts)}`,
    );
  }
  if (backoff !== undefined && !RETRY_BACKOFFS.includes(backoff)) {
    problems.push(`retry.backoff must be 'exponential' or 'fixed', got ${JSON.stringify(backoff)}`);
  }
  for (const [field, value] of [
    ['delayMs', delayMs],
    ['maxDelayMs', maxDelayMs],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      problems.push(`retry.${field} must be a number of milliseconds of 0 or more, got ${String(value)}`);
    }
  }
  const resolved = { ...DEFAULT_RETRY_POLICY, ...retry };
  if (problems.length === 0 && resolved.maxDelayMs < resolved.delayMs) {
    problems.push(`retry.maxDelayMs (${resolved.maxDelayMs}) must not be below retry.delayMs (${resolved.delayMs})`);
  }
  if (retry.jitter !== undefined && typeof retry.jitter !== 'boolean') {
    problems.push(`retry.jitter must be true or false, got ${String(retry.jitter)}`);
  }
  return problems;
}

/** The policy `@Task({ retry })` asks for, with defaults filled in. */
export function resolveRetryPolicy(retry: RetryOptions): RetryPolicy {
  return { ...DEFAULT_RETRY_POLICY, ...retry };
}

/**
 * How long to wait after attempt `failed` (1-based) failed before the next one: `delayMs`, doubled
 * per earlier failure when exponential, at most `maxDelayMs`, and with jitter somewhere in the
 * upper half of that.
 */
export function retryDelayMs(policy: RetryPolicy, failed: number, random: () => number = Math.random): number {
  const growth = policy.backoff === 'exponential' ? 2 ** Math.max(0, failed - 1) : 1;
  const delay = Math.min(policy.maxDelayMs, policy.delayMs * growth);
  return Math.round(policy.jitter ? delay / 2 + (random() * delay) / 2 : delay);
}

/** What a task says while it waits for its next attempt: `attempt 2 of 5 in 4 s: ECONNRESET`. */
export function retryMessage(next: number, attempts: number, delayMs: number, reason: string): string {
  return `attempt ${next} of ${attempts} in ${formatDuration(delayMs)}: ${reason}`;
}

const RETRY_MESSAGE = /^attempt \d+ of \d+ in /;

/** Whether `message` is the note a task shows while it waits for its next attempt. */
export function isRetryMessage(message: string | undefined): boolean {
  return message !== undefined && RETRY_MESSAGE.test(message);
}

/** `30 s`, `1.5 s`, `250 ms`, `2 min`: a duration as task messages say it. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 120) return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(1))} s`;
  return `${Math.round(seconds / 60)} min`;
}

/**
 * How long a method that ignores its aborted signal after a timeout keeps its attempt before
 * the attempt is abandoned: its slot is freed and whatever it returns later is discarded.
 */
export const TIMEOUT_GRACE_MS = 2000;

/** The abort reason `ctx.signal` carries when an attempt reaches `timeoutMs`. */
export class AttemptTimeoutError extends Error {
  override readonly name = 'AttemptTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${formatDuration(timeoutMs)}`);
  }
}
