/**
 * How big stored things may get, where the bound is the engine's own (every runtime and every
 * process applies it, so it cannot be configured per server) and how they are measured.
 */

/** A `statusMessage` longer than this is cut, with an ellipsis, rather than refused. */
export const MAX_STATUS_MESSAGE_CHARS = 4096;

/** Bytes of `value` as JSON (UTF-8): the measure every size limit uses. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

export function truncateStatusMessage(message: string): string {
  if (message.length <= MAX_STATUS_MESSAGE_CHARS) return message;
  return `${message.slice(0, MAX_STATUS_MESSAGE_CHARS - 1)}…`;
}
