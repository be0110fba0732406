/**
 * The task worker leans on two of BullMQ's internals: its lock entries, to keep a newer run's
 * lock renewal (overlap-safe-worker.ts), and its main loop's fields, to wake a shard's loop
 * (shard-takes.ts). A BullMQ release that keeps either elsewhere must be said once at start-up;
 * jobs then run as BullMQ runs them.
 */
import type { Worker } from 'bullmq';
import { expect, it } from 'vitest';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import { isTerminal } from '../../src/engine/task.js';
import type { Logger } from '../../src/observe/logger.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { bullmqLibrary } from '../../src/runtime/bullmq/libraries.js';
import { type RedisScope, useRedisScope } from '../support/redis-scope.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, waitForRecord } from './support.js';

const finishes: TaskExecutor = { execute: async () => ({ kind: 'result', result: { content: [] }, isError: false }) };

/** A runtime with a worker on `shards` shards, and the warnings its worker logged. */
function runtimeOn(scope: RedisScope, shards: number) {
  const warnings: string[] = [];
  const logger: Logger = { ...quietLogger, warn: (message) => void warnings.push(message) };
  const runtime = new BullmqTaskRuntime({
    connection: REDIS_URL,
    prefix: scope.prefix,
    shards,
    logger: quietLogger,
    worker: { executor: finishes, logger },
  });
  scope.onClose(() => runtime.close());
  return { runtime, warnings };
}

describeWithRedis('a BullMQ whose lock manager keeps its runs elsewhere', () => {
  const scope = useRedisScope();

  it('is said once at start-up for every shard, and jobs still run', async () => {
    // BullMQ as it would be with `trackedJobs` renamed: its lock manager works, the field is gone.
    const WorkerClass = bullmqLibrary().Worker as unknown as { prototype: { createLockManager(): void } };
    const createLockManager = WorkerClass.prototype.createLockManager;
    WorkerClass.prototype.createLockManager = function (this: Worker & { lockManager: object }) {
      createLockManager.call(this);
      this.lockManager = new Proxy(this.lockManager, {
        get: (target, property) => {
          if (property === 'trackedJobs') return undefined;
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    };
    scope.onClose(async () => {
      WorkerClass.prototype.createLockManager = createLockManager;
    });
    const { runtime, warnings } = runtimeOn(scope, 2);
    await runtime.worker?.started;
    expect(warnings).toEqual([expect.stringMatching(/no trackedJobs map .* may run twice/)]);

    const tasks = await Promise.all([runtime.create(newRecord({})), runtime.create(newRecord({}))]);
    for (const { taskId } of tasks) {
      expect((await waitForRecord(runtime, taskId, (record) => isTerminal(record.status))).status).toBe('completed');
    }
    // Nothing else was said: the runs went as BullMQ runs them.
    expect(warnings).toHaveLength(1);
  });

  it('is not said with the BullMQ this package pins', async () => {
    const { runtime, warnings } = runtimeOn(scope, 2);
    await runtime.worker?.started;
    expect(warnings).toEqual([]);
  });
});

describeWithRedis('a BullMQ whose worker loop keeps its state elsewhere', () => {
  const scope = useRedisScope();

  it('is said once, and each shard then takes up to the whole concurrency, as before shard takes', async () => {
    // BullMQ as it would be with `mainLoopQueue` kept elsewhere: the loop works, the field is not its own.
    const prototype = bullmqLibrary().Worker.prototype as object;
    const queues = new WeakMap<object, unknown>();
    Object.defineProperty(prototype, 'mainLoopQueue', {
      configurable: true,
      get(this: object) {
        return queues.get(this) ?? null;
      },
      set(this: object, queue: unknown) {
        queues.set(this, queue);
      },
    });
    scope.onClose(async () => {
      Reflect.deleteProperty(prototype, 'mainLoopQueue');
    });
    const { runtime, warnings } = runtimeOn(scope, 3);
    await runtime.worker?.started;
    expect(warnings).toEqual([expect.stringMatching(/no mainLoopQueue, waiting or drained field/)]);
    const tasks = await Promise.all(Array.from({ length: 6 }, () => runtime.create(newRecord({}))));
    for (const { taskId } of tasks) {
      expect((await waitForRecord(runtime, taskId, (record) => isTerminal(record.status))).status).toBe('completed');
    }
    expect(warnings).toHaveLength(1);
  });
});
