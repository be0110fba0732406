/**
 * Errors a task client raises. Each carries a stable `code`: a JSON-RPC code (see
 * `JsonRpcErrorCode`) when the server answered with one, else one of `TaskClientErrorCode`.
 * The classes follow the naming rule stated at `JsonRpcErrorCode`.
 */
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';

/**
 * The codes of the errors the client raises on its own (the server did not answer with a
 * JSON-RPC error). Stable strings: branch on them, not on messages.
 */
export const TaskClientErrorCode = {
  /** The task is unknown or expired (a server answers that with `JsonRpcErrorCode.InvalidParams`). */
  NotFound: 'task_not_found',
  /** The task ended `cancelled`. */
  Cancelled: 'task_cancelled',
  /** The task ended `failed` with a JSON-RPC error. */
  Failed: 'task_failed',
  /** The server speaks neither task dialect, or not the one asked for. */
  Unsupported: 'tasks_unsupported',
  /** There is no open question with that key. */
  NoSuchQuestion: 'no_such_question',
  /** The connection closed before the answer came. */
  Closed: 'connection_closed',
  /** Typed client: the tool ended with an error result (`isError`). */
  ToolError: 'tool_error',
  /** Typed client: the result does not fit the method's declared return type. */
  InvalidResult: 'invalid_result',
} as const;

/** One of the codes in `TaskClientErrorCode`. */
export type TaskClientErrorCode = (typeof TaskClientErrorCode)[keyof typeof TaskClientErrorCode];

/**
 * What every task-client failure is an instance of: `code` is a `TaskClientErrorCode` string for
 * what the client found itself (a cancelled task, a closed connection), or the server's JSON-RPC
 * code (then the error is a `JsonRpcResponseError`). `data` carries the details (the task id, the
 * server's `data`).
 */
export class TaskClientError extends Error {
  override readonly name: string = 'TaskClientError';
  constructor(
    readonly code: TaskClientErrorCode | number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** A JSON-RPC error response, as the server sent it. */
export class JsonRpcResponseError extends TaskClientError {
  override readonly name: string = 'JsonRpcResponseError';
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
  }
}

/** Whether `error` says the task is unknown or expired. */
export function isTaskNotFound(error: unknown): boolean {
  return (
    error instanceof TaskClientError &&
    (error.code === TaskClientErrorCode.NotFound || error.code === JsonRpcErrorCode.InvalidParams)
  );
}
