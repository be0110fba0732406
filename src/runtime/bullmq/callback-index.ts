/**
 * The callback token index in Redis: one key per hook, named by the token's digest, holding the
 * task and key it was issued for. It lives exactly as long as the task's record: made with the
 * record's expiry, moved with it when the expiry changes (a `keepAlive` shortens it at the
 * end), and deleted with it. An entry left behind would answer nothing wrong (its record is
 * gone, so a POST is `unknown`), but would keep a key in Redis per hook for as long as the
 * task's first TTL said, or for ever when that was unlimited.
 *
 * Each key is written on its own, never in a MULTI with the record: the index keys carry no
 * hash tag (they spread over a cluster), so they are in other slots than the record.
 */
import { type CallbackAddress, callbackTokenHash } from '../../engine/callbacks.js';
import { expiresAt, type TaskRecord } from '../../engine/task.js';
import type { RedisClient } from './connection.js';
import type { RuntimeNames } from './keys.js';

/** Indexes the hook's token until `record` expires (unlimited: until it is deleted). */
export async function indexCallbackToken(
  client: RedisClient,
  names: RuntimeNames,
  record: TaskRecord,
  key: string,
  token: string,
): Promise<void> {
  const address: CallbackAddress = { taskId: record.taskId, key };
  const indexKey = names.callbackToken(callbackTokenHash(token));
  const expiry = expiresAt(record);
  if (Number.isFinite(expiry)) await client.set(indexKey, JSON.stringify(address), 'PXAT', Math.floor(expiry));
  else await client.set(indexKey, JSON.stringify(address));
}

/** The task and key the token was issued for, or `undefined` when no live hook has it. */
export async function callbackAddressOf(
  client: RedisClient,
  names: RuntimeNames,
  token: string,
): Promise<CallbackAddress | undefined> {
  const raw = await client.get(names.callbackToken(callbackTokenHash(token)));
  return raw ? (JSON.parse(raw) as CallbackAddress) : undefined;
}

/** Gives the index entries of `record`'s hooks the record's expiry, after it changed. */
export async function followRecordExpiry(client: RedisClient, names: RuntimeNames, record: TaskRecord): Promise<void> {
  const expiry = expiresAt(record);
  if (!Number.isFinite(expiry)) return;
  await Promise.all(indexKeysOf(names, record).map((indexKey) => client.pexpireat(indexKey, Math.floor(expiry))));
}

/** Deletes the index entries of `record`'s hooks, with the record. */
export async function forgetCallbackTokens(
  client: RedisClient,
  names: RuntimeNames,
  record: TaskRecord,
): Promise<void> {
  await Promise.all(indexKeysOf(names, record).map((indexKey) => client.del(indexKey)));
}

function indexKeysOf(names: RuntimeNames, record: TaskRecord): string[] {
  return Object.values(record.callbacks ?? {}).map((state) => names.callbackToken(callbackTokenHash(state.token)));
}
