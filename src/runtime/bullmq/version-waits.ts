/**
 * Resumed tasks waiting for a worker whose tool has their version. A worker with another
 * version moves such a job to delayed (it holds no slot) and puts its task id in the set of
 * its tool and version; every worker looks, when it starts and then every `VERSION_SCAN_MS`,
 * at the sets of the versions it runs and promotes what waits there, with a short claim: a
 * worker of another version that gets the promoted job first sees the claim and puts the job
 * straight back in the queue, and the matching worker, woken by that move, takes it. (Without
 * the claim the other worker would win every time: its own move to delayed wakes the matching
 * worker's blocking fetch, which then waits behind it.) A job also looks again by itself after
 * `VERSION_RECHECK_MS`, the backstop when no matching worker runs the scan.
 */
import type { RedisClient } from './connection.js';
import type { RuntimeNames } from './keys.js';
import { promoteIfDelayed } from './principal-shares.js';
import { ShardQueues } from './shard-queues.js';

/** How often a worker wakes the tasks waiting for the versions it runs. */
export const VERSION_SCAN_MS = 1000;
/** How long a waiting task's job stays delayed before it looks again by itself. */
export const VERSION_RECHECK_MS = 5000;
/** How long a wake-up's claim lasts: a little over one scan. */
const CLAIM_MS = 1500;
/** Waiting tasks one scan wakes at most per tool. */
const MAX_WAKES_PER_SCAN = 100;
/** Wait sets outlive their last write by this much; a version nobody waits for then goes. */
const WAIT_KEY_TTL_MS = 24 * 3600 * 1000;

/** The wait sets of one app (see above): a worker notes its waiters here and wakes its own. */
export class VersionWaits {
  /** A queue handle per shard, made when a wake-up first needs one. */
  private readonly queues: ShardQueues;

  constructor(
    private readonly client: RedisClient,
    private readonly names: RuntimeNames,
    private readonly clock: () => number,
  ) {
    this.queues = new ShardQueues(client, names);
  }

  /** Notes that `taskId` waits for a worker with `tool` at `version` (again: its score moves on). */
  async wait(tool: string, version: string, taskId: string): Promise<void> {
    const now = this.clock();
    const shard = this.names.shardOf(taskId).index;
    const key = this.names.versionWaits.waiting(shard, tool, version);
    const all = this.names.versionWaits.waitingAll(shard);
    await this.client
      .multi()
      .zadd(key, now, taskId)
      .pexpire(key, WAIT_KEY_TTL_MS)
      .zadd(all, now, taskId)
      .pexpire(all, WAIT_KEY_TTL_MS)
      .exec();
  }

  /** `taskId` no longer waits (a worker with its version runs it, or it failed for the wait). */
  async done(tool: string, version: string, taskId: string): Promise<void> {
    const shard = this.names.shardOf(taskId).index;
    await this.client
      .multi()
      .zrem(this.names.versionWaits.waiting(shard, tool, version), taskId)
      .zrem(this.names.versionWaits.waitingAll(shard), taskId)
      .exec();
  }

  /**
   * Promotes the delayed jobs of tasks of `shard` waiting for `tool` at `version`: this worker
   * can run them.
   */
  async wake(shard: number, tool: string, version: string): Promise<void> {
    const waiting = await this.client.zrange(
      this.names.versionWaits.waiting(shard, tool, version),
      '0',
      String(MAX_WAKES_PER_SCAN - 1),
    );
    for (const taskId of waiting) {
      const job = await this.queues.of(taskId).getJob(taskId);
      if (job) {
        await this.client.set(this.names.versionWaits.claim(taskId), version, 'PX', CLAIM_MS);
        await promoteIfDelayed(job);
      } else await this.done(tool, version, taskId);
    }
  }

  /** Tasks waiting for some version right now, per shard (see `countVersionWaiters`). */
  count(): Promise<PromiseSettledResult<number>[]> {
    return countVersionWaiters(this.client, this.names, this.clock());
  }

  /**
   * Whether a worker with `version` is trying to take `taskId` right now (it woke the task
   * within the last `CLAIM_MS`): then a worker of another version that got the job hands it
   * straight back rather than delaying it. Taken once: should the wrong worker get the job
   * again, it delays it until the next wake-up, so two workers never pass it to and fro.
   */
  async claimedBy(taskId: string, version: string): Promise<boolean> {
    return (await this.client.getdel(this.names.versionWaits.claim(taskId))) === version;
  }

  async close(): Promise<void> {
    await this.queues.close();
  }
}

/**
 * Tasks waiting for a worker with their version, one count per shard (by shard index): a count
 * that failed (its master is lost) is its error. A waiter re-enters the count each time it
 * looks again, so an entry older than two looks is one that no longer waits.
 */
export function countVersionWaiters(
  client: RedisClient,
  names: RuntimeNames,
  now: number,
): Promise<PromiseSettledResult<number>[]> {
  return Promise.allSettled(
    names.shards.map((shard) =>
      client.zcount(names.versionWaits.waitingAll(shard.index), now - 2 * VERSION_RECHECK_MS, '+inf'),
    ),
  );
}
