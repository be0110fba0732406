/** Options of `@Task`. Every field must be a literal: `mcp-taskgen` reads them from source. */
export interface TaskOptions {
  /** Tool name on the wire. Default: the method name in snake_case (`buildReport` → `build_report`). */
  readonly name?: string;
  /** Human-readable title shown by clients. */
  readonly title?: string;
  /** Overrides the description taken from the method's JSDoc summary. */
  readonly description?: string;
  /**
   * `optional` (default): the client chooses; a plain call runs inline and returns the result.
   * `required`: the tool only runs as a task (2025-11-25: `-32601` without `task`;
   * 2026-07-28: `-32021` for clients without the tasks extension).
   */
  readonly taskSupport?: 'optional' | 'required';
  /** Retention from creation, in ms. Capped by the server's `maxTtlMs`. `null` asks for unlimited. */
  readonly ttlMs?: number | null;
  /** Suggested delay between client polls, in ms. */
  readonly pollIntervalMs?: number;
  /** Upper bound of runs of this tool at once in one worker process. */
  readonly concurrency?: number;
  /**
   * Runs the method again when it throws (anything but a `NonRetryableError`) or times out:
   * `attempts` runs in all, the first included (default 3), waiting `delayMs` (default 1000)
   * before the second, doubled after each failure with `backoff: 'exponential'` (the default)
   * or always the same with `'fixed'`, at most `maxDelayMs` (default 60 000); `jitter` (default
   * false) spreads each wait over its upper half. Meanwhile the task is `working` and says which
   * attempt comes next, when and why. No retry without it.
   */
  readonly retry?: TaskRetryOptions;
  /**
   * The longest one attempt may run, in ms (default: no limit). At the limit `ctx.signal` aborts
   * ("timed out after 30 s"); a method that ignores it is abandoned a short grace later. The
   * attempt counts as failed: retried when `retry` allows, else the task fails naming the timeout.
   */
  readonly timeoutMs?: number;
  /**
   * What a caller whose client cannot receive a task (no `tasks` capability on 2025-11-25, no
   * tasks extension on 2026-07-28) gets when it calls this tool:
   * - `'auto'` (the default for `optional` tools): the task starts; if it ends within the grace
   *   time (10 s by default) the call answers with its result, else with a handle the caller
   *   follows through the `task_status` / `task_wait` / `task_result` tools;
   * - `'handle'`: the handle at once;
   * - `'inline'`: the tool runs inside the call, however long it takes.
   * Default: the server's `unawareClients.mode`. A `required` tool refuses such callers unless
   * this or the server's mode is `'auto'` or `'handle'`.
   */
  readonly unawareClients?: 'auto' | 'handle' | 'inline';
  /**
   * Repeats of the same call are one task: a call without an idempotency key gets one derived
   * from the caller, the tool and its canonical arguments (sorted keys), so a repeat within the
   * window returns the first call's task and starts nothing. Default `false`.
   */
  readonly idempotent?: boolean;
  /**
   * Run order among waiting tasks: a whole number from 0 to 1000, lower runs first (as in
   * BullMQ). Default 0.
   */
  readonly priority?: number;
  /**
   * Lets a call set its own priority in `_meta["mcp-task-server/priority"]` (0 to 1000). Without
   * it, a call's priority is ignored and the tool's `priority` holds. Default `false`.
   */
  readonly priorityFromCall?: boolean;
  /**
   * The tool's version: a task that resumes after a park (an answered question, a retry's
   * back-off) runs only on a worker whose tool has the version the task started with. A
   * non-empty string of at most 64 characters. Default: a hash of the tool's generated input,
   * output and question schemas, so any change to them is a new version.
   */
  readonly version?: string;
}

/** Options of `@Tool`: an ordinary, synchronous tool that never becomes a task. */
export interface ToolOptions {
  readonly name?: string;
  readonly title?: string;
  readonly description?: string;
}

/** Options of `@NeedsInput`. The answer's type is the decorator's type argument. */
export interface NeedsInputOptions {
  /** The message shown to the person answering. */
  readonly message?: string;
  /**
   * Ask on the tool call itself, before the task exists: a 2026-07-28 client gets it as a
   * multi-round-trip `input_required` result and retries the call with the answer, and the
   * task starts with it (`ctx.input` returns it at once). Other clients are asked as usual,
   * once the task runs.
   */
  readonly upfront?: boolean;
}

/** `@Task({ retry })`: how often, and how soon, the method runs again after a failed attempt. */
export interface TaskRetryOptions {
  /** Runs in all, the first one included (default 3; 1 means no retry). */
  readonly attempts?: number;
  /** `'exponential'` (default): the wait doubles after each failure; `'fixed'`: always `delayMs`. */
  readonly backoff?: 'exponential' | 'fixed';
  /** The wait before the second attempt, in ms (default 1000). */
  readonly delayMs?: number;
  /** The longest wait between two attempts, in ms (default 60 000). */
  readonly maxDelayMs?: number;
  /** Spread each wait at random over its upper half (default false). */
  readonly jitter?: boolean;
}
