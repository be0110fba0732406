/**
 * Version pinning: the words and the default every runtime uses for a resumed task whose tool
 * changed version. One place, so both runtimes say the same thing.
 */
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { TaskOutcome } from './task.js';

/** How long a resumed task waits for a worker with its tool's version by default: 10 minutes. */
export const DEFAULT_VERSION_WAIT_MS = 10 * 60 * 1000;

/** The `statusMessage` of a resumed task waiting for a worker with its tool's version. */
export function versionWaitMessage(tool: string, version: string): string {
  return `waiting for a worker with ${tool} version ${version}`;
}

/** Whether `message` is a runtime's note that the task waits for its version. */
export function isVersionWaitNote(message: string | null | undefined): boolean {
  return message?.startsWith('waiting for a worker with ') ?? false;
}

/**
 * How a task fails when no worker with its version took it within `versionWaitMs`: the method
 * cannot resume on other code, so the caller must start it again (JSON-RPC "Internal error").
 */
export function versionChangedOutcome(tool: string, pinned: string, current: string): TaskOutcome {
  return {
    kind: 'error',
    error: {
      code: JsonRpcErrorCode.InternalError,
      message: `${tool} changed since this task started (version ${pinned} → ${current}); start it again`,
    },
  };
}

/** Refuses a `versionWaitMs` that is not a whole number of milliseconds of 1 or more, naming it. */
export function checkVersionWaitMs(value: number, where = 'versionWaitMs'): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${where} must be a whole number of milliseconds of 1 or more, got ${String(value)}`);
  }
  return value;
}
