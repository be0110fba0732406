/**
 * The Redis slot ledger: a cap holds across ledgers (processes) sharing one prefix, a release
 * gives the room back, renewals keep a live ledger's leases, and a ledger that stops renewing
 * (its process died) loses them within one lease. Each test has its own prefix.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { readConfig } from '../../src/host/config.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { clusterSlotOf, runtimeNames } from '../../src/runtime/bullmq/keys.js';
import { RedisSlotLedger } from '../../src/runtime/bullmq/slot-ledger.js';
import { MemorySlotLedger } from '../../src/runtime/memory/slot-ledger.js';
import { describeWithClusterBinaries, type LocalCluster, startLocalCluster } from '../cluster/local-cluster.js';
import { deleteKeysUnder, describeWithRedis, keysUnder, quietLogger, REDIS_URL, randomPrefix } from './support.js';

const LEASE_MS = 1000;

describeWithRedis('RedisSlotLedger', () => {
  const opened: { ledger: RedisSlotLedger; client: Redis }[] = [];
  const prefixes: string[] = [];

  const ledgerOn = (prefix: string, operationTimeoutMs = 2000): RedisSlotLedger => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const ledger = new RedisSlotLedger(client, runtimeNames(prefix), {
      leaseMs: LEASE_MS,
      operationTimeoutMs,
      logger: quietLogger,
    });
    opened.push({ ledger, client });
    return ledger;
  };
  const freshPrefix = () => {
    const prefix = randomPrefix();
    prefixes.push(prefix);
    return prefix;
  };

  afterEach(async () => {
    for (const { ledger, client } of opened.splice(0)) {
      await ledger.close();
      client.disconnect();
    }
    for (const prefix of prefixes.splice(0)) await deleteKeysUnder(prefix);
  });

  it('holds one cap across two ledgers and gives the room back on release', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    const first = await a.take('sessions', 'p:alice', 2);
    const second = await b.take('sessions', 'p:alice', 2);
    expect(first).toBeTypeOf('function');
    expect(second).toBeTypeOf('function');
    expect(await a.take('sessions', 'p:alice', 2)).toBeUndefined();
    expect(await b.take('sessions', 'p:alice', 2)).toBeUndefined();
    expect(await a.held('sessions', 'p:alice')).toBe(2);
    second?.();
    second?.();
    await expect.poll(() => b.held('sessions', 'p:alice')).toBe(1);
    expect(await a.take('sessions', 'p:alice', 2)).toBeTypeOf('function');
  });

  it('counts each holder and each cap apart', async () => {
    const prefix = freshPrefix();
    const ledger = ledgerOn(prefix);
    expect(await ledger.take('sessions', 'p:alice', 1)).toBeTypeOf('function');
    expect(await ledger.take('sessions', 'p:alice', 1)).toBeUndefined();
    expect(await ledger.take('sessions', 'p:bob', 1)).toBeTypeOf('function');
    expect(await ledger.take('listen', 'p:alice', 1)).toBeTypeOf('function');
    expect(await ledger.take('sessions', 'a:127.0.0.2', 1)).toBeTypeOf('function');
  });

  it('keeps the leases of a live ledger past their first lease', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    expect(await a.take('blocking', 'p:alice', 1)).toBeTypeOf('function');
    // Three leases long: only renewals keep the slot.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    expect(await b.take('blocking', 'p:alice', 1)).toBeUndefined();
  });

  it('gives back the slots of a ledger that stopped renewing within one lease', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    expect(await a.take('blocking', 'p:alice', 1)).toBeTypeOf('function');
    // A dead process: its connection is gone and it renews nothing; it never released.
    (opened[0] as { client: Redis }).client.disconnect();
    expect(await b.take('blocking', 'p:alice', 1)).toBeUndefined();
    await expect
      .poll(() => b.take('blocking', 'p:alice', 1), { timeout: 4 * LEASE_MS, interval: 200 })
      .toBeTypeOf('function');
  });

  it('keeps every key under the prefix, each holder in a hash tag of its own', async () => {
    const prefix = freshPrefix();
    const ledger = ledgerOn(prefix);
    await ledger.take('sessions', 'p:alice', 5);
    await ledger.take('listen', 'p:alice', 5);
    await ledger.take('sessions', 'p:{bob}', 5);
    const keys = (await keysUnder(prefix)).sort();
    expect(keys).toHaveLength(3);
    for (const key of keys)
      expect(key).toMatch(new RegExp(`^${prefix}::\\{tasks\\.slots\\.[\\w-]{22}\\}:(sessions|listen)$`));
    const tags = new Set(keys.map((key) => /\{[^}]*\}/.exec(key)?.[0]));
    expect(tags.size).toBe(2);
  });

  it('counts a held slot past the limit, and lets it go on release', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    expect(await a.take('blocking', 'p:alice', 1)).toBeTypeOf('function');
    const held = await b.hold('blocking', 'p:alice');
    expect(await a.held('blocking', 'p:alice')).toBe(2);
    expect(await b.take('blocking', 'p:alice', 2)).toBeUndefined();
    // Another holder's count is its own.
    expect(await b.take('blocking', 'p:bob', 1)).toBeTypeOf('function');
    held();
    await expect.poll(() => a.held('blocking', 'p:alice')).toBe(1);
  });

  it('writes back held leases that lapsed while Redis did not hear from the ledger, but no released one', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    const admin = new Redis(REDIS_URL);
    try {
      const key = runtimeNames(prefix).slotLeases('blocking', 'p:alice');
      const first = await a.take('blocking', 'p:alice', 2);
      expect(await a.take('blocking', 'p:alice', 2)).toBeTypeOf('function');
      // What an outage longer than a lease leaves: both holders go on, their leases are gone.
      await admin.del(key);
      // The next take writes them back before counting: no third slot.
      expect(await a.take('blocking', 'p:alice', 2)).toBeUndefined();
      expect(await b.take('blocking', 'p:alice', 2)).toBeUndefined();
      await admin.del(key);
      // So does the next renewal (a third of a lease), seen from another ledger.
      await expect.poll(() => b.held('blocking', 'p:alice'), { timeout: 2 * LEASE_MS, interval: 50 }).toBe(2);
      first?.();
      await expect.poll(() => b.held('blocking', 'p:alice')).toBe(1);
      // Renewals after the release keep the other lease and do not bring the released one back.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      expect(await b.held('blocking', 'p:alice')).toBe(1);
      expect(await b.take('blocking', 'p:alice', 2)).toBeTypeOf('function');
    } finally {
      admin.disconnect();
    }
  });

  it('leaves no lease behind for a take that missed its deadline', async () => {
    const prefix = freshPrefix();
    const ledger = ledgerOn(prefix, 200);
    const { client } = opened[0] as { client: Redis };
    // A second's block on the ledger's own connection: the take's script waits behind it, past
    // its deadline, and then still runs.
    const blocked = client.blpop(`${prefix}::nothing`, 1);
    await expect(ledger.take('blocking', 'p:alice', 1)).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
    await blocked;
    // Read on the same connection, behind the script: a lease nobody holds would fill the slot.
    expect(await ledger.held('blocking', 'p:alice')).toBe(0);
    expect(await ledger.take('blocking', 'p:alice', 1)).toBeTypeOf('function');
  });

  it('lets go of everything on close', async () => {
    const prefix = freshPrefix();
    const [a, b] = [ledgerOn(prefix), ledgerOn(prefix)];
    await a.take('sessions', 'p:alice', 1);
    await a.close();
    expect(await b.take('sessions', 'p:alice', 1)).toBeTypeOf('function');
    await expect(a.take('sessions', 'p:alice', 1)).rejects.toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
  });
});

it('MemorySlotLedger counts per cap and holder, and releases once', async () => {
  const ledger = new MemorySlotLedger();
  expect(ledger.scope).toBe('process');
  const release = await ledger.take('sessions', 'p:alice', 1);
  expect(await ledger.take('sessions', 'p:alice', 1)).toBeUndefined();
  expect(await ledger.take('sessions', 'p:bob', 1)).toBeTypeOf('function');
  release?.();
  release?.();
  expect(await ledger.held('sessions', 'p:alice')).toBe(0);
  expect(await ledger.take('sessions', 'p:alice', 1)).toBeTypeOf('function');
  const held = await ledger.hold('sessions', 'p:alice');
  expect(await ledger.held('sessions', 'p:alice')).toBe(2);
  held();
  held();
  expect(await ledger.held('sessions', 'p:alice')).toBe(1);
});

describeWithClusterBinaries('RedisSlotLedger on Redis Cluster', () => {
  let cluster: LocalCluster;

  beforeAll(async () => {
    cluster = await startLocalCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("holds each holder's caps across two runtimes, holders spread over the masters", async () => {
    const prefix = randomPrefix();
    const runtimes = [0, 1].map(
      () => new BullmqTaskRuntime({ connection: cluster.connection, prefix, shards: 3, logger: quietLogger }),
    );
    try {
      const holders = Array.from({ length: 12 }, (_, index) => `p:user-${index}`);
      for (const holder of holders) {
        for (const runtime of runtimes) expect(await runtime.slots.take('sessions', holder, 2)).toBeTypeOf('function');
        for (const runtime of runtimes) expect(await runtime.slots.take('sessions', holder, 2)).toBeUndefined();
        expect(await runtimes[0]?.slots.take('listen', holder, 2)).toBeTypeOf('function');
      }
      // One script, one key: each holder's keys share a hash tag, and the holders use several masters.
      const names = runtimeNames(prefix, undefined, 3);
      const masters = new Set<number>();
      for (const holder of holders) {
        const tags = ['sessions', 'listen'].map(
          (cap) => /\{([^}]*)\}/.exec(names.slotLeases(cap, holder))?.[1] as string,
        );
        expect(new Set(tags).size).toBe(1);
        masters.add((await cluster.masterOf(tags[0] as string)).port);
        expect(clusterSlotOf(tags[0] as string)).toBeGreaterThanOrEqual(0);
      }
      expect(masters.size).toBeGreaterThan(1);
    } finally {
      await Promise.all(runtimes.map((runtime) => runtime.close()));
    }
  }, 60_000);
});

it('reads the lease from MCP_TASK_SLOT_LEASE_MS, at least 1000 ms', () => {
  const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
  expect(readConfig({ ...redis, MCP_TASK_SLOT_LEASE_MS: '2000' }).redis).toMatchObject({ slotLeaseMs: 2000 });
  expect(() => readConfig({ ...redis, MCP_TASK_SLOT_LEASE_MS: '999' })).toThrow(
    /^MCP_TASK_SLOT_LEASE_MS="999" is not valid: MCP_TASK_SLOT_LEASE_MS must be a whole number of milliseconds from 1000/,
  );
  expect(
    () => new RedisSlotLedger({} as never, runtimeNames(), { leaseMs: 10, operationTimeoutMs: 1, logger: quietLogger }),
  ).toThrow(/slotLeaseMs must be a whole number of ms of 1000 or more, got 10/);
});
