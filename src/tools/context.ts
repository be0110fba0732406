import type { Duration } from './duration.js';

/**
 * What a running `@Task` (or `@Tool`) method sees of the framework: its task id, an abort
 * signal, progress, a logger, the questions it may ask and replayable steps. Declare it as the
 * method's last parameter; `mcp-taskgen` leaves it out of the input schema. `Questions` maps each
 * `@NeedsInput` name to its answer type, so `ctx.input` is typed.
 *
 * @example
 * ```ts
 * import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';
 *
 * export class Deployer {
 *   @Task()
 *   @NeedsInput<{ approve: boolean }>('approval', { message: 'Deploy to production?' })
 *   async deploy(service: string, ctx: TaskContext<{ approval: { approve: boolean } }>): Promise<{ deployed: boolean }> {
 *     // Runs once: when the method runs again after the question, the stored tag comes back.
 *     const tag = await ctx.step('build', async () => `${service}:${Date.now()}`);
 *     ctx.progress({ message: `built ${tag}`, progress: 1, total: 2 });
 *     const approval = await ctx.input('approval');
 *     if (approval.action !== 'accept' || !approval.content.approve) return { deployed: false };
 *     if (ctx.signal.aborted) return { deployed: false };
 *     ctx.log.info('deploying', { service, tag });
 *     return { deployed: true };
 *   }
 * }
 * ```
 * @mcpTaskgen context
 */
export interface TaskContext<Questions extends object = QuestionMap, Tools extends object = ToolMap> {
  /** The task's id, or `undefined` when the tool was called without a task and runs inline. */
  readonly taskId: string | undefined;
  /**
   * Aborted when the client cancels the task (or the inline call), the server shuts down, or
   * the attempt reaches the tool's `timeoutMs` (then its reason says "timed out after 30 s").
   */
  readonly signal: AbortSignal;
  /**
   * Which attempt of the method this run is, from 1: it grows when the tool's `retry` policy
   * runs the method again after a failure; a run replayed after a question or a lost worker
   * keeps the number. Always 1 for a call without a task.
   */
  readonly attempt: number;
  /**
   * Reports progress. The message becomes the task's `statusMessage`; numbers, when given,
   * are forwarded as progress notifications where the dialect supports them.
   */
  progress(update: string | TaskProgress): void;
  /** Structured logger scoped to this task. */
  readonly log: TaskLogger;
  /**
   * Asks the caller the question declared with `@NeedsInput(name)` and resolves with the
   * answer, or with the caller's refusal (`decline`, `cancel`). The task is `input_required`
   * meanwhile. On a runtime that frees the worker while the task waits, the method runs again
   * from the top once answered: questions already answered resolve at once, and `step` results
   * are replayed, so code before the question should be deterministic or wrapped in `step`.
   *
   * @example
   * ```ts
   * const approval = await ctx.input('approval');
   * if (approval.action !== 'accept' || !approval.content.approve) return { deployed: false };
   * ```
   */
  input<Name extends keyof Questions & string>(
    name: Name,
    options?: InputOptions,
  ): Promise<InputResult<Questions[Name]>>;
  /**
   * Runs `run` once over the task's life and stores its (JSON) result; when the method runs
   * again after a pause, the stored result is returned instead of running it again.
   */
  step<T>(name: string, run: () => Promise<T> | T): Promise<T>;
  /**
   * Waits `duration` (milliseconds, or `'90s'`, `'15m'`, `'2h'`, `'250ms'`, `'1d'`), holding
   * no worker slot: the task stays `working` with the message `sleeping until <ISO time>`. On
   * BullMQ a sleep longer than the input grace (2 s by default) parks the task as a delayed job,
   * which survives restarts of every process, and the method runs again from the top at the
   * wake time: steps, answers and earlier sleeps are replayed, not redone, so code before the
   * sleep should be deterministic or wrapped in `step`. The wake time is kept from the first
   * call: a replayed sleep that is over resolves at once. A sleep that parks unwinds the run
   * with `TaskPaused`: code that catches errors around it must rethrow what `isTaskPaused` accepts.
   *
   * Rejects with a `RangeError` naming the value for a negative or unparseable duration (or one
   * over a year), and naming both times for a sleep that would outlast the task's TTL. A cancel
   * ends it at once. Without a task (a plain `tools/call`) it waits in place.
   *
   * @example
   * ```ts
   * await ctx.step('start', () => api.start(job));
   * await ctx.sleep('15m'); // the worker is free meanwhile
   * const status = await ctx.step('poll', () => api.status(job));
   * ```
   */
  sleep(duration: Duration, options?: SleepOptions): Promise<void>;
  /**
   * Makes a callback URL an outside system POSTs JSON to when it is done (a CI run, a payment
   * provider): `hook.url` is `<publicUrl>/callbacks/<token>`; `await hook.wait()` parks the task
   * (`working`, `waiting for callback <name>`, no worker held) until the POST comes or
   * `timeoutMs` passes. `mcp-taskgen` reads `Payload` and generates its schema; a POST that does
   * not fit it is refused (HTTP 400) and the task keeps waiting. A run replayed after a pause
   * gets the same hook back (same id, same URL), never a new one. Needs a task (not an inline
   * call), a public base URL (`publicUrl` or `MCP_TASK_PUBLIC_URL`), and a timeout within the
   * task's TTL.
   *
   * @example
   * ```ts
   * const hook = await ctx.callback<{ conclusion: 'success' | 'failure' }>('ci', { timeoutMs: 3_600_000 });
   * await ctx.step('start', () => ci.start({ notify: hook.url }));
   * const outcome = await hook.wait();
   * if (outcome.status === 'timed_out') return { passed: false };
   * return { passed: outcome.payload.conclusion === 'success' };
   * ```
   */
  callback<Payload = unknown>(name: string, options?: CallbackOptions): Promise<CallbackHook<Payload>>;
  /**
   * Starts another tool of the same app as its own task (a child): its own id and status, owned
   * by this task's principal, counted against its quotas, and cancelled when this task is.
   * `args` are checked against the tool's input schema first (an invalid field is an error
   * naming it). Replay-safe: when the method runs again, the same call site finds the child it
   * started before (keys per call site, as for questions: `tool`, `tool#2`, ...), so spawn in a
   * deterministic order. With the generated `TaskTools` as `Tools`, the tool name, the
   * arguments and `result()` are typed from the tool's own declaration.
   *
   * @example
   * ```ts
   * const child = await ctx.spawn('checksum_batch', { files });
   * const sums = await child.result();
   * ```
   */
  spawn<Name extends keyof Tools & string>(
    tool: Name,
    args: SpawnArgs<Tools, Name>,
  ): Promise<ChildTask<SpawnResult<Tools, Name>>>;
  /**
   * Waits until every child has ended and resolves with their results in order; rejects with a
   * `ChildTaskFailedError` naming the first child (in order) that did not complete. While it
   * waits the task is parked: `working`, "3 of 10 subtasks done", holding no worker.
   */
  all<const Children extends readonly ChildTask<unknown>[]>(children: Children): Promise<ChildResults<Children>>;
}

/** Per-call options of `ctx.sleep`. */
export interface SleepOptions {
  /**
   * Names the sleep's replay key (default `sleep`; repeats get `sleep#2`, `sleep#3`, ...). Only
   * the order of calls per name matters on replay, so naming sleeps keeps them apart when a
   * branch adds or skips one.
   */
  readonly name?: string;
}

/** Per-call options of `ctx.callback`. */
export interface CallbackOptions {
  /**
   * How long the hook waits for its POST, in milliseconds, from its first making (a replay does
   * not restart it). Default: until the task expires; a timeout past the task's TTL is refused.
   */
  readonly timeoutMs?: number;
}

/** What `ctx.callback` returns: the URL to hand out, and the wait for its POST. */
export interface CallbackHook<Payload = unknown> {
  /** A public id of the hook (for logs; not a capability). */
  readonly id: string;
  /** Where the outside system POSTs its JSON payload: the token in it is the only capability. */
  readonly url: string;
  /** Parks the task until the payload comes (`received`) or the timeout passes (`timed_out`). */
  wait(): Promise<CallbackOutcome<Payload>>;
}

/** How a callback wait ended. */
export type CallbackOutcome<Payload = unknown> =
  | { readonly status: 'received'; readonly payload: Payload }
  | { readonly status: 'timed_out' };

/**
 * A child task started with `ctx.spawn`. `result()` parks the parent until the child has ended,
 * then resolves with the child's return value or rejects with a `ChildTaskFailedError`.
 */
export interface ChildTask<Result> {
  /** The child's task id: it is a task of its own, in `tasks/get`, the listing and the dashboard. */
  readonly taskId: string;
  /** The tool the child runs. */
  readonly tool: string;
  /** The child's return value, once it has ended (see `TaskContext.all` for several). */
  result(): Promise<Result>;
}

/** What `ctx.all` resolves with: each child's result type, in order. */
export type ChildResults<Children extends readonly ChildTask<unknown>[]> = {
  -readonly [Index in keyof Children]: Children[Index] extends ChildTask<infer Result> ? Result : never;
};

/**
 * The tools `ctx.spawn` may start, by tool name, with their argument and result types: the
 * generated module exports the app's own as `TaskTools`. The default allows any name, untyped.
 */
export type ToolMap = Record<string, ToolTypes>;

/** One tool's types in a `ToolMap`: what `ctx.spawn` takes and what `result()` gives. */
export interface ToolTypes {
  readonly input: unknown;
  readonly output: unknown;
}

/** The arguments `ctx.spawn(name, ...)` takes. */
export type SpawnArgs<Tools, Name extends keyof Tools> = Tools[Name] extends { readonly input: infer Input }
  ? Input
  : unknown;

/** What a spawned `name`'s `result()` resolves with. */
export type SpawnResult<Tools, Name extends keyof Tools> = Tools[Name] extends { readonly output: infer Output }
  ? Output
  : unknown;

/** The default question map: any question, loosely typed answers. */
export type QuestionMap = Record<string, Record<string, unknown>>;

/** Per-call options of `ctx.input`. */
export interface InputOptions {
  /** Overrides the message declared with `@NeedsInput` for this one question. */
  readonly message?: string;
}

/** What `ctx.input` resolves with: the typed answer, or the caller's refusal. */
export type InputResult<Answer> =
  | { readonly action: 'accept'; readonly content: Answer }
  | { readonly action: 'decline' }
  | { readonly action: 'cancel' };

/**
 * A progress report for `ctx.progress`: `message` becomes the task's `statusMessage`;
 * `progress` (and `total`, when known) go out as progress notifications where the revision has
 * them. `progress` should grow from one report to the next.
 */
export interface TaskProgress {
  readonly message?: string;
  readonly progress?: number;
  readonly total?: number;
}

/**
 * `ctx.log`: the server's logger with the task id and tool name on every line. `data` is
 * structured fields, never part of the message text.
 */
export interface TaskLogger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}
