// #region class
import { type Integer, Task, type TaskContext } from 'mcp-task-server';

export interface CountRequest {
  /** Count the primes below this number. */
  below: Integer;
}

export class Primes {
  /** Counts the primes below a number. */
  @Task({ title: 'Count primes' })
  async countPrimes({ below }: CountRequest, ctx: TaskContext): Promise<{ count: Integer }> {
    let count = 0;
    for (let n = 2; n < below; n++) {
      ctx.signal.throwIfAborted(); // a cancel aborts the signal
      if (isPrime(n)) count++;
      if (n % 100_000 === 0) ctx.progress({ message: `checked ${n}`, progress: n, total: below });
    }
    return { count };
  }
}
// #endregion class

function isPrime(n: number): boolean {
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
  return true;
}
