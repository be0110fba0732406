/**
 * The slot ledger of an app on Redis: caps on sessions, listen streams and blocking waits hold
 * across every server process. Each slot is a lease: a member `processId:slotId` of the
 * holder's sorted set for that cap (`RuntimeNames.slotLeases`), scored by when it runs out.
 * Taking a slot drops the set's lapsed leases and adds one if fewer than the limit remain, in
 * one script (Redis time, so no process's clock decides); this process renews the leases it
 * holds every third of a lease, and lets each go when its holder does. A process that dies
 * renews nothing, so its slots come back within one lease. `hold` adds a lease whatever the
 * count (a slot granted while Redis did not answer, handed over once it does). A take that gives
 * up at its deadline withdraws its lease, in case the script still runs after it.
 *
 * Bound: a process that stalls longer than a lease (a long GC pause, a partition, Redis itself
 * stopped) loses its leases in Redis while their holders go on, so for that moment the cap can be
 * passed by what that process held. The leases come back with the process's next renewal or
 * take, whichever reaches Redis first: both write every lease this process still holds, lapsed
 * or not, so an outage longer than a lease does not leave the cap counting low for as long as
 * the holders stay (which would let each outage add another full limit). A released slot does
 * not come back: the release drops it from what this process holds before its `ZREM` is sent,
 * and a renewal or take sent earlier on the same connection runs before that `ZREM`.
 */
import { randomUUID } from 'node:crypto';
import { TaskError } from '../../engine/errors.js';
import type { ReleaseSlot, SlotLedger } from '../../engine/slot-ledger.js';
import type { Logger } from '../../observe/logger.js';
import { type RedisClient, whenReady, withDeadline } from './connection.js';
import type { RuntimeNames } from './keys.js';
import { LuaScript } from './lua-script.js';

/** How long a lease lasts unless renewed (default): a dead process's slots come back within it. */
export const DEFAULT_SLOT_LEASE_MS = 30_000;
/** The shortest lease accepted: renewals must fit inside it with room for a slow round trip. */
export const MIN_SLOT_LEASE_MS = 1000;

/** Redis time in ms, in a script. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: the holder's lease set for the cap. ARGV: member, limit (-1: whatever the count, for a
 * slot the holder already holds), lease ms, then the members this process already holds in the
 * set (renewed, and written back if they lapsed, before counting). 1 when taken, 0 when the
 * holder already has `limit` live leases. The set lives as long as its newest lease.
 */
const TAKE = new LuaScript(
  'mcpTaskTakeSlot',
  `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local limit = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
for i = 4, #ARGV do redis.call('ZADD', KEYS[1], now + lease, ARGV[i]) end
if limit >= 0 and redis.call('ZCARD', KEYS[1]) >= limit then
  if #ARGV > 3 then redis.call('PEXPIRE', KEYS[1], lease) end
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1`,
);

/**
 * KEYS: a lease set. ARGV: lease ms, then the members this process holds in it. Renews them, and
 * writes back any that lapsed while Redis did not hear from this process: their holders still
 * hold them. The number written that were not there.
 */
const RENEW = new LuaScript(
  'mcpTaskRenewSlots',
  `${NOW}
local lease = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local restored = 0
for i = 2, #ARGV do
  restored = restored + redis.call('ZADD', KEYS[1], now + lease, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], lease)
return restored`,
);

/** KEYS: a lease set. The live leases in it. */
const COUNT = new LuaScript(
  'mcpTaskCountSlots',
  `${NOW}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')`,
);

export interface RedisSlotLedgerOptions {
  /** How long a lease lasts unless renewed (default 30 s, at least 1 s). */
  readonly leaseMs?: number;
  /** Longest a take waits for Redis before RUNTIME_UNAVAILABLE. */
  readonly operationTimeoutMs: number;
  readonly logger: Logger;
}

export class RedisSlotLedger implements SlotLedger {
  readonly scope = 'app';
  readonly leaseMs: number;
  /** Names this process's leases; a restarted process holds none of its predecessor's. */
  private readonly processId = randomUUID();
  private nextSlot = 0;
  /** The members this process holds, per lease set. */
  private readonly mine = new Map<string, Set<string>>();
  private readonly renewer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    private readonly names: RuntimeNames,
    private readonly options: RedisSlotLedgerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_SLOT_LEASE_MS;
    if (!Number.isInteger(this.leaseMs) || this.leaseMs < MIN_SLOT_LEASE_MS) {
      throw new RangeError(
        `slotLeaseMs must be a whole number of ms of ${MIN_SLOT_LEASE_MS} or more, got ${this.leaseMs}`,
      );
    }
    for (const script of [TAKE, RENEW, COUNT]) script.define(client);
    // A third of a lease: two renewals may fail or lag before a live process loses a slot.
    this.renewer = setInterval(() => void this.renew(), Math.floor(this.leaseMs / 3));
    this.renewer.unref();
  }

  async take(cap: string, holder: string, limit: number): Promise<ReleaseSlot | undefined> {
    return this.lease(cap, holder, limit);
  }

  async hold(cap: string, holder: string): Promise<ReleaseSlot> {
    const release = await this.lease(cap, holder, -1);
    if (!release) throw new TaskError('RUNTIME_UNAVAILABLE', `Redis did not count a held ${cap} slot`);
    return release;
  }

  /** Adds a lease for `holder` if it holds fewer than `limit` (-1: whatever it holds), and its release. */
  private async lease(cap: string, holder: string, limit: number): Promise<ReleaseSlot | undefined> {
    if (this.closed) throw new TaskError('RUNTIME_UNAVAILABLE', 'The slot ledger is closed');
    const key = this.names.slotLeases(cap, holder);
    const member = `${this.processId}:${this.nextSlot++}`;
    let taken: unknown;
    try {
      taken = await withDeadline(`take a ${cap} slot`, this.options.operationTimeoutMs, async (signal) => {
        await whenReady(this.client, signal);
        // Read when the script is sent, after the wait: a slot released meanwhile is not sent back.
        const alreadyHeld = [...(this.mine.get(key) ?? [])];
        return TAKE.run(this.client, [key], [member, limit, this.leaseMs, ...alreadyHeld]);
      });
    } catch (error) {
      // The script may still run after the deadline: its lease, which nobody holds, goes with it
      // (sent behind the script on the same connection) rather than filling a slot for a lease.
      this.client.zrem(key, member).catch(() => {});
      throw error;
    }
    if (Number(taken) !== 1) return undefined;
    const held = this.mine.get(key) ?? new Set<string>();
    held.add(member);
    this.mine.set(key, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.delete(member);
      if (held.size === 0 && this.mine.get(key) === held) this.mine.delete(key);
      // Best effort: a release Redis does not hear of lapses with its lease.
      this.client.zrem(key, member).catch((error: unknown) => {
        this.options.logger.debug('A slot release did not reach Redis; its lease will lapse', {
          cap,
          error: String(error),
        });
      });
    };
  }

  async held(cap: string, holder: string): Promise<number> {
    return Number(await COUNT.run(this.client, [this.names.slotLeases(cap, holder)], []));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewer);
    const held = [...this.mine];
    this.mine.clear();
    await Promise.allSettled(
      held.map(([key, members]) =>
        withDeadline('release slots', this.options.operationTimeoutMs, () => this.client.zrem(key, ...members)),
      ),
    );
  }

  /** Keeps every lease this process holds alive: one script per lease set. */
  private async renew(): Promise<void> {
    const held = [...this.mine].filter(([, members]) => members.size > 0);
    const results = await Promise.allSettled(
      held.map(([key, members]) => RENEW.run(this.client, [key], [this.leaseMs, ...members])),
    );
    const restored = results.reduce(
      (sum, result) => sum + (result.status === 'fulfilled' ? Number(result.value) : 0),
      0,
    );
    if (restored > 0) {
      this.options.logger.warn('Slot leases had lapsed in Redis while still held; written back', { restored });
    }
    const failed = results.filter((result) => result.status === 'rejected');
    if (failed.length > 0) {
      this.options.logger.warn('Could not renew slot leases; they lapse unless a later renewal gets through', {
        leaseSets: failed.length,
        error: String((failed[0] as PromiseRejectedResult).reason),
      });
    }
  }
}
