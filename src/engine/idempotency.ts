/**
 * Idempotent creation: what makes two `tools/call`s "the same request", decided here and
 * enforced atomically by the runtime (see `IdempotencyClaim`). A repeat with the same key, from
 * the same principal, for the same tool, within the window gets the task the first call made.
 */
import { createHash } from 'node:crypto';
import type { Caller } from './caller.js';
import { TaskError } from './errors.js';

/** Longest idempotency key a caller may send, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Printable ASCII without spaces: what fits an HTTP header, a log line and a Redis key alike. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * Refuses a caller's key that is empty, longer than `MAX_IDEMPOTENCY_KEY_LENGTH` or has
 * characters outside printable ASCII; `field` names where it came from in the message.
 */
export function checkIdempotencyKey(key: unknown, field: string): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new TaskError(
      'INVALID_IDEMPOTENCY_KEY',
      `${field} must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new TaskError(
      'INVALID_IDEMPOTENCY_KEY',
      `${field} may only hold printable ASCII characters without spaces (0x21 to 0x7e)`,
    );
  }
  return key;
}

/**
 * JSON with object keys sorted at every depth: the same arguments in any key order give the
 * same text, so they derive the same key and compare equal.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The claim a runtime takes for an idempotent create: a digest of principal, tool and key, so
 * two principals (or two tools) with the same key never meet, and the stored key reveals
 * nothing of the caller's.
 */
export function idempotencyClaim(caller: Caller, tool: string, key: string): string {
  return createHash('sha256')
    .update(caller.principal === null ? 'anonymous' : `principal:${caller.principal}`)
    .update('\0')
    .update(tool)
    .update('\0')
    .update(key)
    .digest('base64url');
}

/** The key `@Task({ idempotent: true })` derives when the call brings none: its canonical arguments. */
export function argumentsKey(args: unknown): string {
  return `args:${createHash('sha256').update(canonicalJson(args)).digest('base64url')}`;
}

/** Whether a stored task was made by the same request: the same tool with the same arguments. */
export function sameRequest(stored: { tool: string; args: unknown }, tool: string, args: unknown): boolean {
  return stored.tool === tool && canonicalJson(stored.args) === canonicalJson(args);
}
