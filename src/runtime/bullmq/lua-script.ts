/**
 * A Lua script sent by hash (EVALSHA) and uploaded on first use or after a Redis restart
 * (NOSCRIPT). Kept apart so the record store reads as data operations, not plumbing.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisClient } from './connection.js';

export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Loads the script into Redis's cache, so that `run` finds it by hash at once: without a
   * NOSCRIPT retry, commands sent after it on the same connection also run after it (a record
   * before its job). Called whenever the connection is (re)established, since a Redis restart
   * empties the cache.
   */
  async load(client: Redis): Promise<void> {
    await client.script('LOAD', this.source);
  }

  async run(client: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
