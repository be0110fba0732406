import type { TaskOutcome } from './task.js';

/** JSON-RPC "Internal error": what a task fails with when its work broke in an unexpected way. */
export const INTERNAL_ERROR_CODE = -32603;

export function internalErrorOutcome(error: unknown): TaskOutcome {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'error', error: { code: INTERNAL_ERROR_CODE, message: message || 'Internal error' } };
}
