/**
 * Callback hooks (`ctx.callback`) as record changes: made once per key, waited for, settled by
 * a POST or by their timeout. Both runtimes go through these, so "the same hook on replay",
 * "single use" and "a timeout never past the task's TTL" hold the same everywhere.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type CallbackState, expiresAt, isTerminal, type TaskRecord } from './task.js';
import type { TaskChange } from './transitions.js';

/** What a method asks of `ctx.callback`: its name and how long it waits for the POST. */
export interface CallbackRequest {
  readonly name: string;
  /** Milliseconds from now; absent: until the task's expiry. */
  readonly timeoutMs?: number;
}

/** How a callback wait ended, as `hook.wait()` resolves (the payload unchecked here). */
export type CallbackResult =
  | { readonly status: 'received'; readonly payload: unknown }
  | { readonly status: 'timed_out' };

/** Bytes of randomness in a callback token: 192 bits, above the 128 the URL must carry. */
const TOKEN_BYTES = 24;

/** A fresh token: base64url, 32 characters. */
export function newCallbackToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** What the runtimes index a token by: its SHA-256, base64url. The token itself is never a key. */
export function callbackTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Whether `text` has the shape of a token (so a lookup is worth it). */
export function looksLikeCallbackToken(text: string): boolean {
  return /^[A-Za-z0-9_-]{32}$/.test(text);
}

/** The `statusMessage` of a task parked for the callback `name`. */
export function callbackWaitMessage(name: string): string {
  return `waiting for callback ${name}`;
}

/** Whether a status message is the one a callback wait writes (a runtime note, not progress). */
export function isCallbackWaitNote(message: string | undefined): boolean {
  return message?.startsWith('waiting for callback ') ?? false;
}

/** A `ctx.callback` timeout that cannot work: not a positive whole number, or past the task's TTL. */
export class CallbackTimeoutError extends RangeError {
  override readonly name = 'CallbackTimeoutError';
}

/**
 * The state of a new hook, checked against the task's expiry: a timeout that would outlast the
 * task is refused with a message naming both.
 */
export function newCallbackState(record: TaskRecord, request: CallbackRequest, now: number): CallbackState {
  const { timeoutMs } = request;
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) {
    throw new CallbackTimeoutError(
      `ctx.callback('${request.name}'): timeoutMs must be a positive whole number of milliseconds, got ${String(timeoutMs)}`,
    );
  }
  const expiry = expiresAt(record);
  if (timeoutMs !== undefined && now + timeoutMs > expiry) {
    throw new CallbackTimeoutError(
      `ctx.callback('${request.name}'): timeoutMs ${timeoutMs} ends after the task expires ` +
        `(its TTL is ${record.ttlMs} ms, ${Math.max(0, expiry - now)} ms from now): ` +
        'use a shorter timeout or give the tool a longer ttlMs',
    );
  }
  const token = newCallbackToken();
  return {
    name: request.name,
    id: `cb_${callbackTokenHash(token).slice(0, 16)}`,
    token,
    createdAt: now,
    timeoutAt: timeoutMs === undefined ? (Number.isFinite(expiry) ? expiry : null) : now + timeoutMs,
    status: 'waiting',
  };
}

/** Stores a new hook under `key`, unless the task ended or the key has one already. */
export function callbackChange(record: TaskRecord, key: string, state: CallbackState): TaskChange | undefined {
  if (isTerminal(record.status) || record.callbacks?.[key]) return undefined;
  return { status: record.status, callbacks: { ...record.callbacks, [key]: state } };
}

/** The outcome of the hook `key` when it is settled (received or timed out), else `undefined`. */
export function settledCallback(record: TaskRecord | undefined, key: string): CallbackResult | undefined {
  const state = record?.callbacks?.[key];
  if (!state) return undefined;
  if (state.status === 'received') return { status: 'received', payload: state.payload };
  if (state.status === 'timed_out') return { status: 'timed_out' };
  return undefined;
}

/** Whether the hook `key` still waits and its timeout has come. */
export function callbackDue(record: TaskRecord, key: string, now: number): boolean {
  const state = record.callbacks?.[key];
  return state?.status === 'waiting' && state.timeoutAt !== null && state.timeoutAt <= now;
}

/** Says the task waits for the hook `key` (its `statusMessage`), unless it says so already. */
export function callbackWaitChange(record: TaskRecord, key: string): TaskChange | undefined {
  const state = record.callbacks?.[key];
  if (state?.status !== 'waiting' || isTerminal(record.status)) return undefined;
  const message = callbackWaitMessage(state.name);
  return record.statusMessage === message ? undefined : { status: 'working', statusMessage: message };
}

/** The hook `key` timed out: settled so, and the wait's note cleared. */
export function callbackTimeoutChange(record: TaskRecord, key: string, now: number): TaskChange | undefined {
  const state = record.callbacks?.[key];
  if (state?.status !== 'waiting' || isTerminal(record.status)) return undefined;
  return {
    status: record.status,
    ...(isCallbackWaitNote(record.statusMessage) && { statusMessage: null }),
    callbacks: { ...record.callbacks, [key]: { ...state, status: 'timed_out', settledAt: now } },
  };
}

/**
 * Why a POST to a hook cannot be taken (`unknown` 404, `ended` and `timed_out` 410, `used`
 * 409), or `undefined` when it can.
 */
export type CallbackRefusal = 'unknown' | 'ended' | 'timed_out' | 'used';

/** Whether the hook `key` of `record` takes a payload now; the refusal when not. */
export function callbackRefusal(record: TaskRecord | undefined, key: string, now: number): CallbackRefusal | undefined {
  const state = record?.callbacks?.[key];
  if (!record || !state) return 'unknown';
  if (isTerminal(record.status)) return 'ended';
  if (state.status === 'received') return 'used';
  if (state.status === 'timed_out' || (state.timeoutAt !== null && state.timeoutAt <= now)) return 'timed_out';
  return undefined;
}

/** The payload arrived: the hook settles with it, and the wait's note is cleared. */
export function callbackDeliveryChange(
  record: TaskRecord,
  key: string,
  payload: unknown,
  now: number,
): TaskChange | undefined {
  if (callbackRefusal(record, key, now) !== undefined) return undefined;
  const state = record.callbacks?.[key] as CallbackState;
  return {
    status: record.status,
    ...(isCallbackWaitNote(record.statusMessage) && { statusMessage: null }),
    callbacks: { ...record.callbacks, [key]: { ...state, status: 'received', payload, settledAt: now } },
  };
}

/** Whether the task has a hook that waits and whose timeout has not come: a parked task keeps waiting. */
export function hasPendingCallback(record: TaskRecord, key: string, now: number): boolean {
  const state = record.callbacks?.[key];
  return state?.status === 'waiting' && (state.timeoutAt === null || state.timeoutAt > now);
}

/** Where the token of a hook points: its task and key (what the runtimes index by token digest). */
export interface CallbackAddress {
  readonly taskId: string;
  readonly key: string;
}
