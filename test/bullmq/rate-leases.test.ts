/**
 * The rate limits on Redis take the steady budget in leases: one round trip per lease, points
 * charged before they are used and never used after the window they were charged to, so
 * several processes together never admit more than the limit in a window.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { leaseSize, RateLimits } from '../../src/host/rate-limits.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from './support.js';

const subject = { principal: 'alice' } as const;

describeWithRedis('rate limit leases on Redis', () => {
  let prefix: string;
  let clients: Redis[];

  beforeEach(() => {
    prefix = randomPrefix();
    clients = [];
  });

  afterEach(async () => {
    for (const client of clients) client.disconnect();
    await deleteKeysUnder(prefix);
  });

  /** A process's limiter, on a connection of its own whose commands are counted. */
  function process(perSecond: number, burst: number, clock?: () => number) {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    clients.push(redis);
    const counted = { commands: 0 };
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command, stream) => {
      counted.commands++;
      return send(command, stream);
    }) as typeof redis.sendCommand;
    const limits = new RateLimits(
      { createsPerSecond: perSecond, createBurst: burst, readsPerSecond: perSecond, readBurst: burst },
      { redis, prefix },
      clock,
    );
    return { limits, counted };
  }

  it('sizes a lease at a tenth of the rate, between 1 and 100', () => {
    expect([leaseSize(5), leaseSize(50), leaseSize(500), leaseSize(1e9)]).toEqual([1, 5, 50, 100]);
  });

  it('asks Redis once per lease, not once per request', async () => {
    const { limits, counted } = process(500, 1000);
    await limits.consume(subject, 'read'); // connects and takes the first lease
    const before = counted.commands;
    for (let index = 0; index < 49; index++) expect(await limits.consume(subject, 'read')).toBeUndefined();
    // The 49 requests after the first fit the first lease of 50.
    expect(counted.commands - before).toBe(0);
    expect(await limits.consume(subject, 'read')).toBeUndefined();
    expect(counted.commands - before).toBeGreaterThan(0);
  });

  it('never uses a lease after the window it was charged to', async () => {
    let now = Date.now();
    const { limits, counted } = process(500, 1000, () => now);
    await limits.consume(subject, 'read');
    const before = counted.commands;
    now += 1001; // past the one-second window Redis charged the lease to
    await limits.consume(subject, 'read');
    expect(counted.commands - before).toBeGreaterThan(0);
  });

  it('admits no more than the limit in a window across processes, and refuses with a retry delay', async () => {
    const perSecond = 100;
    const burst = 1;
    // A window is one second from the first request; three tries to fit the count in one.
    for (let attempt = 0; attempt < 3; attempt++) {
      prefix = randomPrefix();
      const processes = [process(perSecond, burst), process(perSecond, burst), process(perSecond, burst)];
      let admitted = 0;
      let refused: unknown;
      const started = Date.now();
      for (let index = 0; index < 3 * perSecond; index++) {
        const limited = await processes[index % 3]?.limits.consume(subject, 'create');
        if (limited) refused = limited;
        else admitted++;
      }
      if (Date.now() - started >= 900) continue; // crossed into a second window: measure again
      expect(admitted).toBeLessThanOrEqual(perSecond + burst);
      // Leases held unused by the other processes are refused early: at most one lease each.
      expect(admitted).toBeGreaterThanOrEqual(perSecond + burst - 3 * leaseSize(perSecond));
      expect(refused).toMatchObject({ code: -32011, retryAfterMs: expect.any(Number) });
      return;
    }
    throw new Error('the machine was too slow to fit 300 requests into one second three times');
  });
  it('lets a burst of requests wait for a connection still opening on one ready listener', async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
    clients.push(redis);
    const limits = new RateLimits(
      { createsPerSecond: 1000, createBurst: 1000, readsPerSecond: 1000, readBurst: 1000 },
      { redis, prefix },
    );
    const before = redis.listenerCount('ready');
    // Twenty requests at once, before the connection is up: one listener each tripped Node's
    // MaxListenersExceededWarning (10) on the client.
    const burst = Array.from({ length: 20 }, () => limits.consume(subject, 'read'));
    expect(redis.listenerCount('ready') - before).toBeLessThanOrEqual(1);
    await redis.connect();
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 20 }, () => undefined));
    expect(redis.listenerCount('ready')).toBe(before);
  });
});
