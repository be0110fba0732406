/**
 * What a running `@Task` method sees of the framework: its id, its abort signal, progress and a logger.
 * Declare it as the method's last parameter; `mcp-taskgen` leaves it out of the input schema.
 * @mcpTaskgen context
 */
export interface TaskContext {
  /** The task's id, or `undefined` when the tool was called without a task and runs inline. */
  readonly taskId: string | undefined;
  /** Aborted when the client cancels the task (or the inline call), or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Reports progress. The message becomes the task's `statusMessage`; numbers, when given,
   * are forwarded as progress notifications where the dialect supports them.
   */
  progress(update: string | TaskProgress): void;
  /** Structured logger scoped to this task. */
  readonly log: TaskLogger;
}

export interface TaskProgress {
  readonly message?: string;
  readonly progress?: number;
  readonly total?: number;
}

export interface TaskLogger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}
