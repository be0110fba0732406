import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { TaskOutcome } from './task.js';

/** What a task fails with when its work broke in an unexpected way: JSON-RPC "Internal error". */
export function internalErrorOutcome(error: unknown): TaskOutcome {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'error', error: { code: JsonRpcErrorCode.InternalError, message: message || 'Internal error' } };
}
