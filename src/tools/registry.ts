/**
 * The tools of one app: the generated manifest bound to the instances that run them. It is
 * the `TaskExecutor` runtimes call, and the place arguments are validated and results shaped,
 * so every runtime and every dialect behaves the same.
 */
import { getMethodMark } from '../decorators/marks.js';
import {
  AttemptTimeoutError,
  resolveRetryPolicy,
  retryDelayMs,
  retryPolicyProblems,
  TIMEOUT_GRACE_MS,
} from '../engine/attempts.js';
import type { CallbackRequest } from '../engine/callbacks.js';
import { ChildrenPaused } from '../engine/children.js';
import { AttemptFailed, isTaskPaused } from '../engine/errors.js';
import {
  factsOf,
  type LifecycleEvent,
  noObserver,
  PROCESS_NAME,
  type TaskFacts,
  type TaskObserver,
} from '../engine/lifecycle.js';
import type { ChildSpawner, ExecutionControl, RuntimeCallback, TaskExecutor } from '../engine/runtime.js';
import { jsonBytes } from '../engine/sizes.js';
import type { InputAnswer, PendingInput, TaskOutcome, TaskRecord } from '../engine/task.js';
import { MAX_PRIORITY } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { childLogger, type Logger, silentLogger } from '../observe/logger.js';
import { inSpan, SpanKind } from '../observe/tracing.js';
import { inlineChildren, taskChildren } from './children.js';
import type { CallbackHook, CallbackOptions, TaskContext, TaskProgress } from './context.js';
import {
  MANIFEST_FORMAT_VERSION,
  type QuestionDefinition,
  type TaskManifest,
  type TaskToolDefinition,
} from './definition.js';
import { parseDuration } from './duration.js';
import { ManifestError, NonRetryableError } from './errors.js';
import { REPEAT_MARK, repeatKey } from './replay-keys.js';
import { errorResult, toCallToolResult } from './result.js';
import { toolVersionOf, toolVersionProblem } from './version.js';

export interface ToolRegistryOptions {
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes; each tool runs on the instance of its class. */
  readonly instances: readonly object[];
  readonly logger?: Logger;
  /**
   * Largest result (or error) a task may store, serialized as JSON; a bigger one fails the task
   * with a message saying so. Default 4 MiB.
   */
  readonly maxResultBytes?: number;
  /** Told when runs start, ask, progress and end (lifecycle logs and metrics). */
  readonly observer?: TaskObserver;
  /**
   * How long a method that ignores its aborted signal after its `timeoutMs` keeps its attempt
   * before the attempt is abandoned (default `TIMEOUT_GRACE_MS`, 2 s): the slot is freed, and
   * what the method returns later is discarded.
   */
  readonly timeoutGraceMs?: number;
  /**
   * The base of callback URLs (`<publicUrl>/callbacks/<token>`), as the outside world reaches
   * the server: `ctx.callback` refuses to make a hook without it.
   */
  readonly publicUrl?: string;
  /**
   * Creates the child tasks `ctx.spawn` starts (the host gives its engine, so children go
   * through the ordinary create: quotas, fair share, TTL). Without it, `ctx.spawn` refuses.
   * Also settable later with `spawnWith`.
   */
  readonly spawner?: ChildSpawner;
  /** Largest arguments a spawned child stores, serialized after validation (default 1 MiB). */
  readonly maxArgumentBytes?: number;
}

export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/** Arguments that do not match the tool's input schema (JSON-RPC -32602 on the wire). */
export class InvalidArgumentsError extends Error {
  override readonly name = 'InvalidArgumentsError';
}

export class UnknownToolError extends Error {
  override readonly name = 'UnknownToolError';
}

export interface InlineRun {
  readonly signal: AbortSignal;
  readonly onProgress?: (update: TaskProgress) => void;
  /** How this call can ask its caller a question, when it can (see `TaskContext.input`). */
  readonly ask?: (key: string, pending: PendingInput) => Promise<InputAnswer>;
  /** How this call keeps `ctx.step` results across its rounds, when it has more than one. */
  readonly step?: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** Hears each `ctx.log` line of this call besides the server's log (the caller's client may want them). */
  readonly onLog?: LogListener;
}

/** Hears a line a method logged through `ctx.log`, with the name of the tool that logged it. */
export type LogListener = (
  level: LogLineLevel,
  message: string,
  data: Record<string, unknown> | undefined,
  tool: string,
) => void;

export type LogLineLevel = 'debug' | 'info' | 'warn' | 'error';

/** What one run of a method can do besides computing: the part a runtime or a call provides. */
interface RunControl {
  readonly taskId: string | undefined;
  readonly signal: AbortSignal;
  /** The attempt number `ctx.attempt` shows (1 when absent). */
  readonly attempt?: number;
  progress(update: string | TaskProgress): void;
  readonly ask?: (key: string, pending: PendingInput) => Promise<InputAnswer>;
  readonly step?: <T>(name: string, run: () => Promise<T>) => Promise<T>;
  /** How this run sleeps durably (see `ExecutionControl.sleep`); without it a sleep waits in place. */
  readonly sleep?: (key: string, durationMs: number) => Promise<void>;
  /** How this run makes callback hooks (see `ExecutionControl.callback`). */
  readonly callback?: (key: string, request: CallbackRequest) => Promise<RuntimeCallback>;
  readonly onLog?: LogListener;
  /** `ctx.spawn` and `ctx.all` of a task run (absent for inline calls, which refuse them). */
  readonly children?: Pick<TaskContext, 'spawn' | 'all'>;
  /** Hears what a failing method threw, and a result that does not match its declared type. */
  readonly onThrown?: (error: unknown) => void;
  readonly onOutputMismatch?: (detail: string) => void;
}

export class ToolRegistry implements TaskExecutor {
  private readonly tools = new Map<string, TaskToolDefinition>();
  /** Each tool's version (see `toolVersionOf`), computed once at start-up. */
  private readonly versions = new Map<string, string>();
  private readonly instances = new Map<TaskToolDefinition, object>();
  private readonly logger: Logger;
  private readonly maxResultBytes: number;
  private observer: TaskObserver;
  private readonly timeoutGraceMs: number;
  private readonly publicUrl: string | undefined;
  private spawner: ChildSpawner | undefined;
  private readonly maxArgumentBytes: number;

  constructor(options: ToolRegistryOptions) {
    this.spawner = options.spawner;
    this.maxArgumentBytes = options.maxArgumentBytes ?? 1024 * 1024;
    this.logger = options.logger ?? silentLogger;
    this.publicUrl = options.publicUrl === undefined ? undefined : checkPublicUrl(options.publicUrl);
    this.timeoutGraceMs = options.timeoutGraceMs ?? TIMEOUT_GRACE_MS;
    this.maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.observer = options.observer ?? noObserver;
    if (options.manifest.formatVersion !== MANIFEST_FORMAT_VERSION) {
      throw new ManifestError(
        `The generated manifest has format ${String(options.manifest.formatVersion)}, this runtime reads format ${MANIFEST_FORMAT_VERSION}: run \`npx mcp-taskgen\` again`,
      );
    }
    for (const tool of options.manifest.tools) {
      assertStillMarked(tool);
      assertValidPolicy(tool);
      assertPolicyOptions(tool);
      if (this.tools.has(tool.name)) throw new ManifestError(`Two tools are named '${tool.name}'`);
      this.tools.set(tool.name, tool);
      this.versions.set(tool.name, toolVersionOf(tool));
      const instance = options.instances.find((candidate) => candidate instanceof tool.target.class);
      if (instance) this.instances.set(tool, instance);
    }
    assertInstancesMatch(options.manifest, options.instances);
  }

  list(): readonly TaskToolDefinition[] {
    return [...this.tools.values()];
  }

  get(name: string): TaskToolDefinition {
    const tool = this.tools.get(name);
    if (!tool) throw new UnknownToolError(`Unknown tool: ${name}`);
    return tool;
  }

  /** Validates and converts `args`; throws `InvalidArgumentsError` naming the first bad field. */
  parseArguments(tool: TaskToolDefinition, args: unknown): unknown {
    const parsed = tool.input.safeParse(args ?? {});
    if (parsed.success) return parsed.data;
    throw new InvalidArgumentsError(
      `Invalid arguments for tool ${tool.name}: ${describeIssues(parsed.error.issues, '(arguments)')}`,
    );
  }

  concurrencyOf(toolName: string): number | undefined {
    return this.tools.get(toolName)?.concurrency;
  }

  /** The version of each tool this process runs: `@Task({ version })`, else its schemas' hash. */
  toolVersions(): ReadonlyMap<string, string> {
    return this.versions;
  }

  /** Passes a runtime's lifecycle event (a task waiting for its share) to this registry's observer. */
  observe(event: LifecycleEvent): void {
    this.observer.observe(event);
  }

  /** Sets how `ctx.spawn` creates child tasks (the host gives its engine once it has built it). */
  spawnWith(spawner: ChildSpawner): void {
    this.spawner = spawner;
  }

  /** Sets who hears of runs (the host wires its logs and metrics here once it has built them). */
  observeWith(observer: TaskObserver): void {
    this.observer = observer;
  }

  /**
   * Runs a task's work: the `TaskExecutor` side, called by runtimes. Each run is one span
   * (joining the trace of the request that created the task) and a lifecycle story: started,
   * progress, questions, then completed, failed, paused or stopped.
   */
  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    const placement = control.placement;
    const task = factsOf(record, placement?.jobId);
    const startedAt = Date.now();
    this.observer.observe({
      type: 'started',
      task,
      worker: placement?.worker ?? PROCESS_NAME,
      queueWaitMs: Math.max(0, startedAt - record.createdAt),
      resumed: placement?.resumed ?? false,
    });
    return inSpan(
      `task ${record.tool}`,
      {
        kind: SpanKind.CONSUMER,
        ...(placement?.trace && { parent: placement.trace }),
        attributes: { 'mcp.task.id': record.taskId, 'mcp.tool.name': record.tool },
      },
      async () => {
        const tool = this.tools.get(record.tool);
        const attempt = control.attempt ?? 1;
        const policy = tool?.retry ? resolveRetryPolicy(tool.retry) : undefined;
        const attempts = policy?.attempts ?? 1;
        const limit = new AttemptLimit(control.signal, tool?.timeoutMs, this.timeoutGraceMs, (timeoutMs) =>
          this.observer.observe({ type: 'timed_out', task, attempt, attempts, timeoutMs }),
        );
        let thrown: unknown;
        let outcome: TaskOutcome;
        try {
          const running = tool
            ? this.run(tool, record.args, {
                taskId: record.taskId,
                signal: limit.signal,
                attempt,
                progress: (update) => {
                  // An abandoned attempt must not overwrite what the next one (or the retry note) says.
                  if (limit.abandoned) return;
                  const report = typeof update === 'string' ? { message: update } : update;
                  this.observer.observe({ type: 'progress', task, ...report });
                  control.report(report);
                },
                ask: async (key, pending) => {
                  limit.throwIfAbandoned();
                  this.observer.observe({ type: 'input_requested', task, key });
                  // The wait for a person does not count against the attempt's timeout.
                  limit.pause();
                  try {
                    return await inSpan(`task input ${key}`, { attributes: { 'mcp.task.input.key': key } }, () =>
                      control.ask(key, pending),
                    );
                  } finally {
                    limit.resume();
                  }
                },
                step: (name, work) => {
                  limit.throwIfAbandoned();
                  return inSpan(`task step ${name}`, {}, () => control.step(name, work));
                },
                ...(control.sleep && {
                  sleep: async (key: string, durationMs: number) => {
                    limit.throwIfAbandoned();
                    // A sleep is a wait, not work: it does not count against the attempt's timeout.
                    limit.pause();
                    try {
                      await inSpan(`task sleep ${key}`, { attributes: { 'mcp.task.sleep.key': key } }, () =>
                        (control.sleep as NonNullable<ExecutionControl['sleep']>)(key, durationMs),
                      );
                    } finally {
                      limit.resume();
                    }
                  },
                }),
                ...(control.callback && {
                  callback: async (key: string, request: CallbackRequest) => {
                    limit.throwIfAbandoned();
                    const made = await (control.callback as NonNullable<ExecutionControl['callback']>)(key, request);
                    return {
                      id: made.id,
                      token: made.token,
                      wait: async () => {
                        limit.throwIfAbandoned();
                        // The wait for the outside world does not count against the attempt's timeout.
                        limit.pause();
                        try {
                          return await made.wait();
                        } finally {
                          limit.resume();
                        }
                      },
                    };
                  },
                }),
                children: taskChildren(
                  {
                    parent: record,
                    control: {
                      ...(control.spawn && {
                        spawn: (key, create) => {
                          limit.throwIfAbandoned();
                          return control.spawn?.(key, create) as ReturnType<NonNullable<ExecutionControl['spawn']>>;
                        },
                      }),
                      ...(control.awaitChildren && {
                        awaitChildren: async (children) => {
                          limit.throwIfAbandoned();
                          // The wait for children does not count against the attempt's timeout.
                          limit.pause();
                          try {
                            return await (control.awaitChildren?.(children) as ReturnType<
                              NonNullable<ExecutionControl['awaitChildren']>
                            >);
                          } finally {
                            limit.resume();
                          }
                        },
                      }),
                    },
                    spawner: this.spawner,
                    toolOf: (name) => this.get(name),
                    parse: (child, args) => this.parseArguments(child, args),
                    versionOf: (child) => this.versions.get(child.name),
                    maxArgumentBytes: this.maxArgumentBytes,
                    onSpawned: (child, key) =>
                      this.observer.observe({ type: 'spawned', task, child: child.taskId, tool: child.tool, key }),
                  },
                  record.tool,
                ),
                onThrown: (error) => {
                  thrown = error;
                },
                onOutputMismatch: (detail) => this.observer.observe({ type: 'output_invalid', task, detail }),
              })
            : Promise.resolve<TaskOutcome>({
                kind: 'error',
                error: { code: JsonRpcErrorCode.InvalidParams, message: `Unknown tool: ${record.tool}` },
              });
          outcome = await limit.race(running);
        } catch (error) {
          // A durable wait (a sleep, a callback, children) is told by the runtime that parks it, as `parked`.
          if (isTaskPaused(error) && !error.wait && !(error instanceof ChildrenPaused)) {
            this.observer.observe({ type: 'paused', task, keys: error.keys });
          }
          throw error;
        } finally {
          limit.dispose();
        }
        // A cancel or a shutdown is not the method failing: the runtime deals with those.
        const failure = control.signal.aborted ? undefined : attemptFailure(limit.timedOut, thrown);
        if (failure !== undefined) {
          if (policy && attempt < policy.attempts) {
            const delayMs = retryDelayMs(policy, attempt);
            this.observer.observe({ type: 'retry_scheduled', task, attempt, attempts, delayMs, reason: failure });
            throw new AttemptFailed(attempt + 1, policy.attempts, delayMs, failure);
          }
          if (limit.timedOut) {
            const of = attempts > 1 ? ` (attempt ${attempt} of ${attempts})` : '';
            outcome = internal(`${record.tool} ${failure}${of}`);
          }
        }
        outcome = this.bounded(record.tool, outcome);
        this.observeEnd(record, task, startedAt, outcome, control.signal, thrown);
        return outcome;
      },
    );
  }

  /** Checked before the runtime stores it: one oversized result must not cost every reader. */
  private bounded(tool: string, outcome: TaskOutcome): TaskOutcome {
    const size = jsonBytes(outcome.kind === 'result' ? outcome.result : outcome.error);
    if (size <= this.maxResultBytes) return outcome;
    return internal(
      `The ${outcome.kind} of ${tool} is ${size} bytes, over the ${this.maxResultBytes}-byte limit on a stored task result (maxResultBytes)`,
    );
  }

  private observeEnd(
    record: TaskRecord,
    task: TaskFacts,
    startedAt: number,
    outcome: TaskOutcome,
    signal: AbortSignal,
    thrown: unknown,
  ): void {
    const now = Date.now();
    const times = { durationMs: Math.max(0, now - record.createdAt), runMs: now - startedAt };
    if (signal.aborted) {
      const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
      this.observer.observe({ type: 'aborted', task, reason });
    } else if (outcome.kind === 'error') {
      this.observer.observe({
        type: 'failed',
        task,
        ...times,
        kind: 'error',
        code: outcome.error.code,
        message: outcome.error.message,
        ...(thrown !== undefined && { cause: thrown }),
      });
    } else if (outcome.isError) {
      this.observer.observe({
        type: 'failed',
        task,
        ...times,
        kind: 'tool_error',
        message: textOf(outcome.result),
        ...(thrown !== undefined && { cause: thrown }),
      });
    } else {
      this.observer.observe({ type: 'completed', task, ...times });
    }
  }

  /** Runs a tool without a task: the plain `tools/call` path. */
  async runInline(tool: TaskToolDefinition, args: unknown, run: InlineRun): Promise<TaskOutcome> {
    return this.run(tool, args, {
      taskId: undefined,
      signal: run.signal,
      progress: (update) => run.onProgress?.(typeof update === 'string' ? { message: update } : update),
      ...(run.ask && { ask: run.ask }),
      ...(run.step && { step: run.step }),
      ...(run.onLog && { onLog: run.onLog }),
    });
  }

  /**
   * Checks an answer against the question's schema before the engine takes it, so an invalid
   * answer leaves the question open with the reason (rather than failing the method later).
   */
  checkAnswer(toolName: string, pending: PendingInput, answer: InputAnswer): string | undefined {
    if (answer.action !== 'accept') return undefined;
    const question = this.tools.get(toolName)?.questions?.find((q) => q.name === pending.question);
    if (!question) return `the task asks no question named '${pending.question}'`;
    const parsed = question.answer.safeParse(answer.content ?? {});
    return parsed.success ? undefined : describeIssues(parsed.error.issues);
  }

  /**
   * Checks a POSTed callback payload against the schema `mcp-taskgen` generated for the hook
   * `name` of `toolName`: the parsed payload, or the problem naming the field.
   */
  checkCallbackPayload(
    toolName: string,
    name: string,
    payload: unknown,
  ): { readonly ok: true; readonly payload: unknown } | { readonly ok: false; readonly problem: string } {
    const definition = this.tools.get(toolName)?.callbacks?.find((callback) => callback.name === name);
    if (!definition) return { ok: false, problem: `the task declares no callback named '${name}'` };
    const parsed = definition.payload.safeParse(payload);
    return parsed.success
      ? { ok: true, payload: parsed.data }
      : { ok: false, problem: describeIssues(parsed.error.issues, '(payload)') };
  }

  private async run(tool: TaskToolDefinition, rawArgs: unknown, control: RunControl): Promise<TaskOutcome> {
    const { taskId, signal, progress } = control;
    const instance = this.instances.get(tool);
    if (!instance) {
      return internal(
        `No instance of ${tool.target.class.name} was given to this process, so ${tool.name} cannot run here`,
      );
    }
    let args: unknown;
    try {
      args = this.parseArguments(tool, rawArgs);
    } catch (error) {
      return { kind: 'error', error: { code: JsonRpcErrorCode.InvalidParams, message: (error as Error).message } };
    }
    const log = childLogger(this.logger, { tool: tool.name, ...(taskId && { taskId }) });
    const ctx: TaskContext = {
      taskId,
      signal,
      attempt: control.attempt ?? 1,
      progress,
      log: control.onLog ? teeLogger(log, control.onLog, tool.name) : log,
      input: questionAsker(tool, control),
      step: (name, work) => (control.step ? control.step(name, async () => work()) : Promise.resolve(work())),
      sleep: sleeper(control),
      callback: callbackMaker(tool, control, this.publicUrl) as TaskContext['callback'],
      ...(control.children ?? inlineChildren(tool.name)),
    };
    try {
      const value = await tool.invoke(instance, args, ctx);
      const result = toCallToolResult(tool, value, control.onOutputMismatch);
      return { kind: 'result', result, isError: result.isError === true };
    } catch (error) {
      // The run unwinds to wait for an answer: not a failure, the runtime parks it.
      if (isTaskPaused(error)) throw error;
      control.onThrown?.(error);
      if (error instanceof JsonRpcError) {
        return {
          kind: 'error',
          error: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) },
        };
      }
      // A task's failure is logged once, with its stack, by the lifecycle observer.
      if (!signal.aborted && taskId === undefined) log.warn('tool failed', { err: error });
      const message = error instanceof Error ? error.message : String(error);
      const result = errorResult(message || `Tool ${tool.name} failed`);
      return { kind: 'result', result, isError: true };
    }
  }
}

/**
 * Why an attempt failed in a way another attempt may fix, or `undefined`: it timed out, or the
 * method threw anything but a `NonRetryableError`.
 */
function attemptFailure(timedOut: AttemptTimeoutError | undefined, thrown: unknown): string | undefined {
  if (timedOut) return timedOut.message;
  if (thrown === undefined || thrown instanceof NonRetryableError) return undefined;
  return (thrown instanceof Error ? thrown.message : String(thrown)) || 'the method failed';
}

/**
 * One attempt's time limit: its signal follows the run's (cancel, shutdown) and also aborts at
 * `timeoutMs` with an `AttemptTimeoutError`; `race` gives up on a method still running
 * `graceMs` after that, so its slot is freed. The clock stops while the method waits for an
 * answer (`pause`/`resume`): a person's thinking time is not the attempt's. Without `timeoutMs`
 * it only forwards the signal.
 */
class AttemptLimit {
  private readonly controller = new AbortController();
  private readonly forward: () => void;
  private limitTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private giveUp: (() => void) | undefined;
  /** Time left on the clock, and since when it runs (undefined: stopped). */
  private remainingMs: number;
  private runningSince: number | undefined;
  private pauses = 0;
  timedOut: AttemptTimeoutError | undefined;
  abandoned = false;

  constructor(
    private readonly outer: AbortSignal,
    private readonly timeoutMs: number | undefined,
    private readonly graceMs: number,
    private readonly onTimeout: (timeoutMs: number) => void,
  ) {
    this.remainingMs = timeoutMs ?? Number.POSITIVE_INFINITY;
    this.forward = () => this.controller.abort(outer.reason);
    if (outer.aborted) this.forward();
    else outer.addEventListener('abort', this.forward, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** What `running` resolves with, unless the attempt times out and outlives its grace: then it is abandoned. */
  race(running: Promise<TaskOutcome>): Promise<TaskOutcome> {
    if (this.timeoutMs === undefined) return running;
    const abandoned = new Promise<TaskOutcome>((resolve) => {
      this.giveUp = () => {
        this.abandoned = true;
        // Whatever it returns or throws from now on goes nowhere.
        running.catch(() => {});
        resolve({ kind: 'error', error: { code: JsonRpcErrorCode.InternalError, message: 'abandoned' } });
      };
    });
    if (this.pauses === 0) this.start();
    return Promise.race([running, abandoned]);
  }

  /** Stops the clock while the method waits for an answer (calls nest). */
  pause(): void {
    this.pauses++;
    if (this.pauses > 1 || this.runningSince === undefined || this.timedOut) return;
    clearTimeout(this.limitTimer);
    this.remainingMs -= Date.now() - this.runningSince;
    this.runningSince = undefined;
  }

  resume(): void {
    this.pauses = Math.max(0, this.pauses - 1);
    if (this.pauses === 0 && this.giveUp && !this.timedOut) this.start();
  }

  private start(): void {
    const timeoutMs = this.timeoutMs;
    if (timeoutMs === undefined) return;
    this.runningSince = Date.now();
    this.limitTimer = setTimeout(
      () => {
        this.timedOut = new AttemptTimeoutError(timeoutMs);
        this.onTimeout(timeoutMs);
        this.controller.abort(this.timedOut);
        this.graceTimer = setTimeout(() => this.giveUp?.(), this.graceMs);
      },
      Math.max(0, this.remainingMs),
    );
  }

  throwIfAbandoned(): void {
    if (this.abandoned) throw this.controller.signal.reason;
  }

  dispose(): void {
    clearTimeout(this.limitTimer);
    clearTimeout(this.graceTimer);
    this.outer.removeEventListener('abort', this.forward);
  }
}

/** Refuses a hand-written manifest entry whose retry policy or timeout cannot work. */
function assertValidPolicy(tool: TaskToolDefinition): void {
  const problems = retryPolicyProblems(tool.retry, tool.timeoutMs);
  if (problems.length === 0) return;
  throw new ManifestError(`${tool.name} (${tool.source}): ${problems.join('; ')}`);
}

/** A logger that writes to `log` and tells `listener` of each line. */
function teeLogger(log: Logger, listener: LogListener, tool: string): Logger {
  const tee =
    (level: LogLineLevel) =>
    (message: string, data?: Record<string, unknown>): void => {
      log[level](message, data);
      listener(level, message, data, tool);
    };
  return { debug: tee('debug'), info: tee('info'), warn: tee('warn'), error: tee('error') };
}

/**
 * The creation policies of a manifest entry, checked again at start-up: a hand-edited or
 * hand-written manifest gets the bounds `mcp-taskgen` enforces.
 */
function assertPolicyOptions(tool: TaskToolDefinition): void {
  const where = `Tool ${tool.name} (${tool.source})`;
  for (const option of ['idempotent', 'priorityFromCall'] as const) {
    if (tool[option] !== undefined && typeof tool[option] !== 'boolean') {
      throw new ManifestError(`${where}: ${option} must be true or false, got ${JSON.stringify(tool[option])}`);
    }
  }
  const versionProblem = toolVersionProblem(tool.version);
  if (versionProblem) throw new ManifestError(`${where}: ${versionProblem}`);
  const priority = tool.priority;
  if (priority !== undefined && !(Number.isInteger(priority) && priority >= 0 && priority <= MAX_PRIORITY)) {
    throw new ManifestError(
      `${where}: priority must be a whole number from 0 to ${MAX_PRIORITY} (lower runs first), got ${JSON.stringify(priority)}`,
    );
  }
}

/**
 * A manifest entry whose method lost its mark means the source changed (or another decorator
 * wrapped the method) after `mcp-taskgen` last ran: refuse to serve a stale contract.
 */
function assertStillMarked(tool: TaskToolDefinition): void {
  const method: unknown = (tool.target.class.prototype as Record<string, unknown>)[tool.target.method];
  const mark = getMethodMark(method);
  const expected = tool.taskSupport === 'forbidden' ? 'tool' : 'task';
  if (!mark || mark.kind !== expected) {
    throw new ManifestError(
      `${tool.target.class.name}.${tool.target.method} (${tool.source}) is listed as a ${expected} in the generated manifest, ` +
        `but the method ${mark ? `is marked @${mark.kind === 'task' ? 'Task' : 'Tool'}` : typeof method === 'function' ? 'carries no @Task/@Tool mark' : 'does not exist'}. ` +
        'Run `npx mcp-taskgen` to regenerate, and keep @Task/@Tool the top-most decorator.',
    );
  }
}

/**
 * The manifest and the instances must describe the same classes: a class without an instance
 * would fail each call with -32603, and a marked method the manifest lacks (or an instance of a
 * class it does not list) means the generated module is older than the source. All problems go
 * into one error, each naming the class and the file to edit.
 */
function assertInstancesMatch(manifest: TaskManifest, instances: readonly object[]): void {
  const problems: string[] = [];
  const classes = new Map<Function, TaskToolDefinition[]>();
  for (const tool of manifest.tools) classes.set(tool.target.class, [...(classes.get(tool.target.class) ?? []), tool]);
  for (const [cls, tools] of classes) {
    if (instances.some((instance) => instance instanceof cls)) continue;
    problems.push(
      `No instance of ${cls.name} (${sourceFile(tools)}) was given, so ${tools.map((tool) => tool.name).join(', ')} could not run: ` +
        `add \`new ${cls.name}(...)\` to the \`instances\` passed to runTaskServer / runTaskWorkers.`,
    );
  }
  for (const instance of instances) {
    const cls = instance.constructor;
    const listed = [...classes].filter(([manifestClass]) => instance instanceof manifestClass);
    const listedMethods = new Set(listed.flatMap(([, tools]) => tools.map((tool) => tool.target.method)));
    const unlisted = markedMethods(instance).filter((method) => !listedMethods.has(method));
    if (listed.length === 0) {
      problems.push(
        `${cls.name} was given as an instance, but the generated manifest lists no tool of it` +
          `${unlisted.length > 0 ? ` (it marks ${unlisted.join(', ')})` : ''}: run \`npx mcp-taskgen\` to regenerate, or remove it from \`instances\`.`,
      );
    } else if (unlisted.length > 0) {
      problems.push(
        `${cls.name}.${unlisted.join(`, ${cls.name}.`)} ${unlisted.length === 1 ? 'is' : 'are'} marked @Task/@Tool in ${sourceFile(listed.flatMap(([, tools]) => tools))} ` +
          'but missing from the generated manifest: run `npx mcp-taskgen` to regenerate.',
      );
    }
  }
  if (problems.length > 0) throw new ManifestError(problems.join('\n'));
}

/** `src/reports.ts` from a tool's `src/reports.ts:14:3`. */
function sourceFile(tools: readonly TaskToolDefinition[]): string {
  return tools[0]?.source.replace(/:\d+:\d+$/, '') ?? 'its source file';
}

/** Names of the methods on an instance's prototype chain that carry a @Task or @Tool mark. */
function markedMethods(instance: object): string[] {
  const names = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(instance);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor && 'value' in descriptor && getMethodMark(descriptor.value)) names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * `ctx.input` for one run. Keys are derived from the question and how often this run asked it
 * (`approval`, `approval-2`, ...), so a run replayed after a pause meets the same keys in the
 * same order and gets the answers already given.
 */
function questionAsker(tool: TaskToolDefinition, control: RunControl): TaskContext['input'] {
  const asked = new Map<string, number>();
  return async (name, options) => {
    const question = tool.questions?.find((q) => q.name === name);
    if (!question) {
      throw new Error(
        `${tool.name} asked '${name}', but no @NeedsInput('${name}') is declared on ${tool.target.class.name}.${tool.target.method}; declare it and run mcp-taskgen`,
      );
    }
    if (!control.ask) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidRequest,
        `Tool ${tool.name} needs to ask '${name}', which this call cannot carry: call it as a task`,
      );
    }
    const count = (asked.get(name) ?? 0) + 1;
    asked.set(name, count);
    const key = count === 1 ? name : `${name}-${count}`;
    const answer = await control.ask(key, pendingQuestion(question, options?.message));
    if (answer.action !== 'accept') return { action: answer.action };
    const parsed = question.answer.safeParse(answer.content ?? {});
    if (!parsed.success)
      throw new Error(`The answer to '${key}' does not fit its question: ${describeIssues(parsed.error.issues)}`);
    return { action: 'accept', content: parsed.data as Record<string, unknown> };
  };
}

/**
 * `ctx.sleep` for one run. Keys come from the sleep's name (`sleep` unless named) and how often
 * this run slept under it (`sleep`, `sleep#2`, ...), as for questions, so a replayed run meets
 * the same keys in the same order and finds their wake times. The duration is checked before
 * anything else, on every run alike.
 */
function sleeper(control: RunControl): TaskContext['sleep'] {
  const slept = new Map<string, number>();
  return async (duration, options) => {
    const durationMs = parseDuration(duration);
    const name = options?.name ?? 'sleep';
    if (typeof name !== 'string' || name === '' || name.length > 100 || name.includes(REPEAT_MARK)) {
      throw new RangeError(
        `ctx.sleep: a sleep's name is 1 to 100 characters without '${REPEAT_MARK}', got ${JSON.stringify(name)}`,
      );
    }
    const count = (slept.get(name) ?? 0) + 1;
    slept.set(name, count);
    const key = repeatKey(name, count);
    control.signal.throwIfAborted();
    if (control.sleep) return control.sleep(key, durationMs);
    if (durationMs > 0) await abortableDelay(durationMs, control.signal);
  };
}

/** Resolves after `ms` (in steps past setTimeout's limit), or rejects with the signal's reason once it aborts. */
async function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  const until = Date.now() + ms;
  for (let left = ms; left > 0; left = until - Date.now()) {
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.min(left, 2_147_483_647),
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Names a callback may have: they become keys and log fields. */
const CALLBACK_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The base URL without its trailing slash; throws naming the option when it is not http(s). */
export function checkPublicUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RangeError(
      `publicUrl (MCP_TASK_PUBLIC_URL) must be an http:// or https:// URL, got ${JSON.stringify(raw)}`,
    );
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new RangeError(
      `publicUrl (MCP_TASK_PUBLIC_URL) must be an http:// or https:// URL without query or fragment, got ${JSON.stringify(raw)}`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * `ctx.callback` for one run. Keys come from the name and how often this run made it (`ci`,
 * `ci#2`, ...), so a replayed run meets the same keys in the same order and gets the same hooks.
 */
function callbackMaker(
  tool: TaskToolDefinition,
  control: RunControl,
  publicUrl: string | undefined,
): (name: string, options?: CallbackOptions) => Promise<CallbackHook> {
  const made = new Map<string, number>();
  return async (name, options = {}) => {
    if (typeof name !== 'string' || !CALLBACK_NAME.test(name)) {
      throw new Error(
        `${tool.name}: ctx.callback needs a name of 1 to 64 letters, digits, '_', '-' or '.', got ${JSON.stringify(name)}`,
      );
    }
    const definition = tool.callbacks?.find((callback) => callback.name === name);
    if (!definition) {
      throw new Error(
        `${tool.name} made callback '${name}', but the generated manifest has no schema for it: ` +
          `write ctx.callback<Payload>('${name}', ...) in ${tool.target.class.name}.${tool.target.method} and run mcp-taskgen`,
      );
    }
    if (!control.callback) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidRequest,
        `Tool ${tool.name} makes callback '${name}', which needs a task (and a runtime with callbacks): call it as a task`,
      );
    }
    if (publicUrl === undefined) {
      throw new Error(
        `${tool.name}: ctx.callback('${name}') needs the public base URL the outside world reaches this server at: ` +
          'set publicUrl (createTaskServer, runTaskServer, runTaskWorkers) or MCP_TASK_PUBLIC_URL',
      );
    }
    const count = (made.get(name) ?? 0) + 1;
    made.set(name, count);
    const key = repeatKey(name, count);
    const hook = await control.callback(key, {
      name,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    });
    return {
      id: hook.id,
      url: `${publicUrl}/callbacks/${hook.token}`,
      wait: async () => {
        const result = await hook.wait();
        if (result.status === 'timed_out') return { status: 'timed_out' };
        // Checked when it was POSTed; parsed again so the method gets zod's output (defaults, dates).
        const parsed = definition.payload.safeParse(result.payload);
        if (!parsed.success) {
          throw new Error(
            `The payload of callback '${key}' does not fit its schema: ${describeIssues(parsed.error.issues, '(payload)')}`,
          );
        }
        return { status: 'received', payload: parsed.data };
      },
    };
  };
}

/** `path.to.field: message; ...`, naming `whole` when an issue is about the value itself. */
function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[], whole = '(answer)'): string {
  return issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : whole}: ${issue.message}`)
    .join('; ');
}

/** The text of a tool-error result, for the failure line. */
function textOf(result: Readonly<Record<string, unknown>>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.find((block): block is { type: 'text'; text: string } => block?.type === 'text');
  return text?.text ?? 'tool error';
}

function internal(message: string): TaskOutcome {
  return { kind: 'error', error: { code: JsonRpcErrorCode.InternalError, message } };
}

/** The elicitation a question becomes: a form with its schema and message (a per-call one first). */
export function pendingQuestion(question: QuestionDefinition, message?: string): PendingInput {
  return {
    question: question.name,
    params: {
      mode: 'form',
      message: message ?? question.message ?? `Please answer: ${question.name}`,
      requestedSchema: question.schema,
    },
  };
}
