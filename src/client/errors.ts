/**
 * Errors a task client raises. Each carries a stable `code`: a JSON-RPC code when the server
 * answered with one, else one of `TaskClientErrorCode`.
 */
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';

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

export type TaskClientErrorCode = (typeof TaskClientErrorCode)[keyof typeof TaskClientErrorCode];

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
