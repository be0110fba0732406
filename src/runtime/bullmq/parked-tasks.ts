/**
 * Which tasks are parked (their job delayed, no slot held) and why, for the
 * `mcp_task_parked_tasks{reason}` gauge: one sorted set per reason, scored by when the park
 * ends. A worker adds a task when it parks it and removes it when the job runs again; a cancel
 * removes it too (its delayed job is removed with it). Counting only the entries whose end is
 * still ahead leaves out any entry a lost write left behind, and every park prunes entries long
 * past their end, so the sets stay as small as what is parked.
 */
import { PARK_REASONS, type ParkReason } from '../../engine/lifecycle.js';
import type { RedisClient } from './connection.js';
import type { RuntimeNames } from './keys.js';

/** Entries this long past their end are pruned: their task ran again or is gone. */
const PRUNE_AFTER_MS = 3600 * 1000;
/** A set outlives its last park by this much (a park lasts at most a year). */
const PARKED_KEY_TTL_MS = 366 * 24 * 3600 * 1000;

/** Notes that `taskId` is parked for `reason` until `until` (ms since the epoch). */
export async function noteParked(
  client: RedisClient,
  names: RuntimeNames,
  reason: ParkReason,
  taskId: string,
  until: number,
  now: number,
): Promise<void> {
  const key = names.parked(reason);
  await client
    .multi()
    .zadd(key, Math.floor(until), taskId)
    .zremrangebyscore(key, '-inf', `(${now - PRUNE_AFTER_MS}`)
    .pexpire(key, PARKED_KEY_TTL_MS)
    .exec();
}

/** `taskId` is parked no more (its job runs again, or it was cancelled): for one reason, or all. */
export async function noteUnparked(
  client: RedisClient,
  names: RuntimeNames,
  taskId: string,
  reason?: ParkReason,
): Promise<void> {
  const reasons = reason === undefined ? PARK_REASONS : [reason];
  const multi = client.multi();
  for (const each of reasons) multi.zrem(names.parked(each), taskId);
  await multi.exec();
}

/** Tasks parked right now, by reason, across the app: one ZCOUNT per reason. */
export async function countParked(
  client: RedisClient,
  names: RuntimeNames,
  now: number,
): Promise<Record<ParkReason, number>> {
  const counts = await Promise.all(PARK_REASONS.map((reason) => client.zcount(names.parked(reason), now, '+inf')));
  return Object.fromEntries(PARK_REASONS.map((reason, index) => [reason, counts[index] ?? 0])) as Record<
    ParkReason,
    number
  >;
}
