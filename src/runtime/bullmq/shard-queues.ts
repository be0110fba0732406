/**
 * BullMQ queue handles by shard, made the first time a task of that shard needs one: what a
 * wake-up (a fair share's or a version's) uses to find and promote a delayed job. Their errors
 * are the connection's, reported where the connection is owned, so they are dropped here.
 */
import type { Queue } from 'bullmq';
import type { RedisClient } from './connection.js';
import type { TaskJobData } from './jobs.js';
import type { RuntimeNames } from './keys.js';
import { bullmqLibrary } from './libraries.js';

export class ShardQueues {
  private readonly queues = new Map<string, Queue<TaskJobData>>();

  constructor(
    private readonly client: RedisClient,
    private readonly names: RuntimeNames,
  ) {}

  /** The queue of the shard `taskId` lives on. */
  of(taskId: string): Queue<TaskJobData> {
    const shard = this.names.shardOf(taskId);
    let queue = this.queues.get(shard.queue);
    if (!queue) {
      queue = new (bullmqLibrary().Queue)<TaskJobData>(shard.queue, {
        connection: this.client,
        prefix: this.names.prefix,
      });
      queue.on('error', () => {});
      this.queues.set(shard.queue, queue);
    }
    return queue;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
  }
}
