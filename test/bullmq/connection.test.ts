/**
 * Requests that arrive while the runtime's connection is still opening (a server's first burst,
 * or a reconnect) all wait for it: they must not each hang a listener on the client, which
 * makes Node print a "possible EventEmitter memory leak" warning on every busy start.
 */
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { whenReady } from '../../src/runtime/bullmq/connection.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { describeWithRedis, quietLogger, REDIS_URL, randomPrefix } from './support.js';

describeWithRedis('waiting for the Redis connection', () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    process.off('warning', onWarning);
    warnings.length = 0;
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('lets a burst of requests made before the connection is ready wait on one listener', async () => {
    process.on('warning', onWarning);
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: randomPrefix(), logger: quietLogger });
    cleanups.push(() => runtime.close());

    const reads = await Promise.all(Array.from({ length: 200 }, (_, index) => runtime.get(`missing-${index}`)));

    expect(reads.every((read) => read === undefined)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });

  it('adds one ready listener however many wait, and drops a waiter whose deadline passes', async () => {
    const client = new Redis(REDIS_URL, { lazyConnect: true });
    cleanups.push(() => client.disconnect());
    const before = client.listenerCount('ready');
    const deadline = new AbortController();
    const late = whenReady(client, deadline.signal);
    const waits = Array.from({ length: 100 }, () => whenReady(client, new AbortController().signal));

    expect(client.listenerCount('ready') - before).toBe(1);
    deadline.abort(new Error('deadline'));
    await expect(late).rejects.toThrow('deadline');

    await client.connect();
    await Promise.all(waits);
    expect(client.listenerCount('ready')).toBe(before);
  });
});
