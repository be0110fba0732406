/**
 * Engine errors are data: a stable `code` the protocol adapters map to JSON-RPC, and a message
 * that names the task and the rule.
 */

export type TaskErrorCode =
  /** Unknown, expired, or owned by another principal: indistinguishable on purpose. */
  | 'TASK_NOT_FOUND'
  /** A change to a task that already reached a terminal status. */
  | 'TASK_TERMINAL'
  | 'INVALID_CURSOR'
  /** Listing needs an identified caller. */
  | 'LISTING_UNAVAILABLE'
  /** The runtime could not store or read the task (e.g. Redis unreachable). */
  | 'RUNTIME_UNAVAILABLE';

export class TaskError extends Error {
  override readonly name = 'TaskError';
  constructor(
    readonly code: TaskErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function taskNotFound(taskId: string): TaskError {
  return new TaskError('TASK_NOT_FOUND', `Failed to retrieve task: Task not found (${taskId})`);
}
