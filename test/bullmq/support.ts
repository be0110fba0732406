/**
 * Shared by the BullMQ runtime tests: the real Redis they talk to, a random key prefix per
 * test, and key clean-up. Without Redis the tests skip with a visible notice, except in CI
 * (`CI` set), where a missing Redis is a failure, not a silent pass.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, it } from 'vitest';
import { callbackTokenHash } from '../../src/engine/callbacks.js';
import { newTaskId } from '../../src/engine/engine.js';
import type { TaskRuntime } from '../../src/engine/runtime.js';
import type { NewTaskRecord, TaskRecord } from '../../src/engine/task.js';
import { silentLogger } from '../../src/observe/logger.js';
import type { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const quietLogger = silentLogger;

async function probeRedis(): Promise<boolean> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export const redisAvailable = await probeRedis();

/** `describe` that needs Redis: skipped (with a notice) without it, failing in CI. */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisAvailable) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs a Redis server', () => {
        throw new Error(`Redis is not reachable at ${REDIS_URL}, and CI is set: these tests must run there`);
      });
    });
    return;
  }
  console.warn(`\n!! Skipping "${name}": no Redis at ${REDIS_URL} (set REDIS_URL, or start redis-server)\n`);
  describe.skip(name, body);
}

/** A fresh namespace per test, so tests never see each other's keys. */
export function randomPrefix(): string {
  return `mcpt-${randomBytes(6).toString('hex')}`;
}

export async function withRedis<T>(use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

export async function keysUnder(prefix: string): Promise<string[]> {
  return withRedis(async (client) => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  });
}

/** Deletes every key of a test's prefix: BullMQ's (`<prefix>:<queue>:…`) and ours (`<prefix>::…`). */
export async function deleteKeysUnder(prefix: string): Promise<void> {
  const keys = await keysUnder(prefix);
  if (keys.length > 0) await withRedis((client) => client.del(...keys));
}

/** The first state of the task (current or future) that `accept` takes: subscribe, then read. */
export function waitForRecord(
  runtime: TaskRuntime,
  taskId: string,
  accept: (record: TaskRecord) => boolean,
  timeoutMs = 10_000,
): Promise<TaskRecord> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`task ${taskId} did not reach the expected state within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (record: TaskRecord) => {
      clearTimeout(timer);
      unsubscribe();
      resolve(record);
    };
    const unsubscribe = runtime.subscribe(({ record }) => {
      if (record.taskId === taskId && accept(record)) finish(record);
    });
    runtime.get(taskId).then((record) => {
      if (record && accept(record)) finish(record);
    }, reject);
  });
}

/** Whether Redis holds the index entry of a callback token, under the runtime's key names. */
export async function callbackTokenStored(
  runtime: BullmqTaskRuntime,
  token: string,
  client?: Pick<Redis, 'exists'>,
): Promise<boolean> {
  const key = runtime.names.callbackToken(callbackTokenHash(token));
  const count = client ? await client.exists(key) : await withRedis((own) => own.exists(key));
  return count === 1;
}

/** A new task record as the engine would hand it to a runtime. */
export function newRecord(args: unknown, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  const now = Date.now();
  return {
    taskId: newTaskId(),
    owner: 'alice',
    tool: 't',
    args,
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    ...overrides,
  };
}
