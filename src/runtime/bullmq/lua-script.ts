/**
 * A Lua script sent by hash (EVALSHA) and uploaded on first use or after a Redis restart
 * (NOSCRIPT). Kept apart so the record store reads as data operations, not plumbing.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * EVAL with the full source: it never needs a second try, so commands sent after it on the
   * same connection run after it. Used where that order matters (a record before its job).
   */
  runInOrder(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return client.eval(this.source, keys.length, ...keys, ...args);
  }

  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
