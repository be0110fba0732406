/**
 * A Lua script registered as an ioredis command (`defineCommand`). ioredis sends the full
 * source the first time a script runs on a socket and its hash (EVALSHA) after that, so a
 * Redis restart (a new socket, an empty script cache) needs no NOSCRIPT retry, which would
 * reorder the script behind commands sent after it (a record behind its job). Only a
 * `SCRIPT FLUSH` on a live connection still causes one. Kept apart so the record store reads
 * as data operations, not plumbing.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

type ScriptCommand = (numberOfKeys: number, ...keysThenArgs: (string | number)[]) => Promise<unknown>;

export class LuaScript {
  constructor(
    /** The ioredis command name; unique per script in this package. */
    private readonly name: string,
    private readonly source: string,
  ) {}

  /** Makes the script callable on `client` (and on the pipelines it creates). */
  define(client: RedisClient): void {
    if (typeof (client as unknown as Record<string, unknown>)[this.name] === 'function') return;
    client.defineCommand(this.name, { lua: this.source });
  }

  run(client: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.command(client)(keys.length, ...keys, ...args);
  }

  /** Queues the script on a MULTI created by a client it was defined on; the reply comes from `exec()`. */
  queue(transaction: ChainableCommander, keys: readonly string[], args: readonly (string | number)[]): void {
    this.command(transaction)(keys.length, ...keys, ...args);
  }

  private command(target: RedisClient | ChainableCommander): ScriptCommand {
    const command = (target as unknown as Record<string, ScriptCommand | undefined>)[this.name];
    if (!command) throw new Error(`Lua script ${this.name} is not defined on this Redis client`);
    return command.bind(target);
  }
}
