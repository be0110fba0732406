/**
 * Durable sleeps (`ctx.sleep`) as record changes and words: both runtimes go through these, so
 * "the wake time is kept from the first call", "a sleep past the TTL is refused" and the status
 * note read the same everywhere.
 */
import { formatDuration } from './attempts.js';
import { expiresAt, isTerminal, type TaskRecord } from './task.js';
import type { TaskChange } from './transitions.js';

/** The longest sleep: a year, as long as a parked job is ever delayed. */
export const MAX_SLEEP_MS = 365 * 24 * 3600 * 1000;

const SLEEP_NOTE = /^sleeping until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/;

/** The `statusMessage` of a task sleeping until `until`: `sleeping until 2026-12-01T13:05:00.000Z`. */
export function sleepNote(until: number): string {
  return `sleeping until ${new Date(until).toISOString()}`;
}

/** Whether `message` is the note of a sleeping task (a runtime's note, not the method's progress). */
export function isSleepNote(message: string | null | undefined): boolean {
  return message != null && SLEEP_NOTE.test(message);
}

/** The wake time a sleep note names, or `undefined` when `message` is not one. */
export function sleepNoteUntil(message: string | null | undefined): number | undefined {
  const match = message == null ? null : SLEEP_NOTE.exec(message);
  return match ? Date.parse(match[1] as string) : undefined;
}

/**
 * When the sleep `key` of `record` ends: the wake time stored by its first call, else
 * `now + durationMs`. A new sleep that would end at or after the task's expiry is refused with
 * a `RangeError` naming both: the task would be gone before it woke.
 */
export function plannedWake(record: TaskRecord, key: string, durationMs: number, now: number): number {
  const stored = record.sleeps?.[key];
  if (stored !== undefined) return stored;
  const until = now + durationMs;
  const expiry = expiresAt(record);
  if (until >= expiry) {
    throw new RangeError(
      `ctx.sleep('${key}') of ${formatDuration(durationMs)} would end at ${new Date(until).toISOString()}, ` +
        `after the task expires at ${new Date(expiry).toISOString()} (its TTL is ${formatDuration(record.ttlMs ?? 0)}): ` +
        'sleep less, or create the task with a longer TTL',
    );
  }
  return until;
}

/**
 * Stores the sleep's wake time (once: a replay keeps the first) and says so in the status:
 * the task stays `working`, with the message `sleeping until <ISO time>`. `undefined` when the
 * task ended or nothing would change.
 */
export function sleepChange(record: TaskRecord, key: string, until: number): TaskChange | undefined {
  if (isTerminal(record.status)) return undefined;
  const note = sleepNote(until);
  const stored = record.sleeps?.[key] !== undefined;
  if (stored && record.statusMessage === note && record.status === 'working') return undefined;
  return {
    status: 'working',
    statusMessage: note,
    ...(!stored && { sleeps: { ...record.sleeps, [key]: until } }),
  };
}

/** After the wake: the note goes, unless something else was written over it meanwhile. */
export function wokeChange(record: TaskRecord, until: number): TaskChange | undefined {
  if (record.status !== 'working' || record.statusMessage !== sleepNote(until)) return undefined;
  return { status: 'working', statusMessage: null };
}

/** Whether some sleep of `record` ends after `now`: a task asleep must not be woken by an answer. */
export function isAsleep(record: TaskRecord, now: number): boolean {
  return Object.values(record.sleeps ?? {}).some((until) => until > now);
}
