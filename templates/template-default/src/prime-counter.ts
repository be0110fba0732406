import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type Integer, NeedsInput, Task, type TaskContext, Tool } from 'mcp-task-server';

export interface CountRequest {
  /**
   * Count the primes below this number.
   * @minimum 2
   */
  below: Integer;
}

export interface CountReport {
  below: Integer;
  /** How many primes there are below `below`. */
  count: Integer;
  /** The largest of them (absent when there are none). */
  largest?: Integer;
}

/** The answer to "start this long count?". */
export interface GoAhead {
  /** Start counting? */
  start: boolean;
}

export interface PrimeCheck {
  n: Integer;
  prime: boolean;
  /** The smallest divisor, when `n` is not prime. */
  divisor?: Integer;
}

/** Counts above this ask before they start: they take a while. */
export const ASK_ABOVE = 1_000_000;

/** Numbers checked between progress reports. Each report also yields, so a cancel gets through. */
const CHUNK = 50_000;

/**
 * Counts primes the slow way: a stand-in for your own long-running work. Edit it, or add
 * classes of your own; `npm run dev` regenerates the schemas and restarts the server on save.
 */
export class PrimeCounter {
  /** Counts the primes below a number, reporting progress. Counts above a million ask first. */
  @Task({ title: 'Count primes', ttlMs: 3_600_000, pollIntervalMs: 500 })
  @NeedsInput<GoAhead>('goAhead', { message: 'This count takes a while. Start it?' })
  async countPrimes(request: CountRequest, ctx: TaskContext<{ goAhead: GoAhead }>): Promise<CountReport> {
    const { below } = request;
    if (below > ASK_ABOVE) {
      // The task is `input_required` until the caller answers. On Redis the worker is freed meanwhile
      // and this method runs again from the top once answered, so the code before a question must
      // ask the same question again (wrap anything costly or random in `ctx.step`).
      const answer = await ctx.input('goAhead', {
        message: `Counting the primes below ${below.toLocaleString('en')} takes a while. Start?`,
      });
      if (answer.action !== 'accept' || !answer.content.start) {
        // Any thrown Error ends the call as a tool error the model can read.
        throw new Error('Not started: the count was declined.');
      }
    }

    let count = 0;
    let largest: number | undefined;
    for (let n = 2; n < below; n++) {
      if (n % CHUNK === 0) {
        ctx.progress({ message: `checked ${n} of ${below} numbers, ${count} primes`, progress: n, total: below });
        // Give the server a moment to handle other requests (such as a cancel), then stop if cancelled.
        await yieldToEventLoop();
        ctx.signal.throwIfAborted();
      }
      if (smallestDivisor(n) === undefined) {
        count++;
        largest = n;
      }
    }
    return { below, count, ...(largest !== undefined && { largest }) };
  }

  /**
   * Tells whether a number is prime. An ordinary tool: it answers at once and never becomes a task.
   * @param n The number to check.
   */
  @Tool({ title: 'Check one number' })
  async isPrime(n: Integer): Promise<PrimeCheck> {
    if (n < 2) return { n, prime: false };
    const divisor = smallestDivisor(n);
    return divisor === undefined ? { n, prime: true } : { n, prime: false, divisor };
  }
}

/** The smallest divisor of `n` (n >= 2) other than 1, or `undefined` when `n` is prime. */
function smallestDivisor(n: number): number | undefined {
  if (n % 2 === 0) return n === 2 ? undefined : 2;
  for (let d = 3; d * d <= n; d += 2) {
    if (n % d === 0) return d;
  }
  return undefined;
}
