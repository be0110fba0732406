/**
 * Every bound the server puts on one caller, with its default, in one place: what the README's
 * "Limits" table documents. Apps change them in `createTaskServer({ limits })`, operators by
 * environment (`MCP_TASK_<NAME>`, read by `runTaskServer`; see `limitsFromEnvironment`).
 */

export interface TaskServerLimits {
  /** Largest HTTP request body, in bytes (413 above it). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting of a request, checked by a scan before it is parsed. */
  readonly maxJsonDepth: number;
  /** Largest tool arguments a task stores, serialized after validation. */
  readonly maxArgumentBytes: number;
  /** Largest answer to one question, serialized. */
  readonly maxAnswerBytes: number;
  /** Largest stored result of a task; a bigger one fails the task. */
  readonly maxResultBytes: number;
  /** A `tasks/list` page stops before its tasks add up to more than this. */
  readonly maxListPageBytes: number;
  /** Tasks a principal may have that have not ended yet. */
  readonly maxLiveTasksPerPrincipal: number;
  /**
   * Tasks of one principal that run at once, across every worker process (anonymous callers
   * count as one principal). Tasks over it wait, `working`, until one of that principal's runs
   * ends; other principals' tasks keep starting.
   */
  readonly maxRunningTasksPerPrincipal: number;
  /** Open 2025-11-25 sessions per principal. */
  readonly maxSessionsPerPrincipal: number;
  /** Open `subscriptions/listen` task streams per principal. */
  readonly maxListenStreamsPerPrincipal: number;
  /** `tasks/result` calls (and SEP-1686 task calls) waiting at once per principal. */
  readonly maxBlockingResultsPerPrincipal: number;
  /** Task ids one listen stream may follow. */
  readonly maxTaskIdsPerListen: number;
  /** Child tasks one task may start with `ctx.spawn` over its life; the next spawn is refused. */
  readonly maxChildrenPerTask: number;
  /** Task creations (`tools/call`) per principal per second, and the burst above it. */
  readonly createsPerSecond: number;
  readonly createBurst: number;
  /** Task reads (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/update`) per principal per second, and the burst. */
  readonly readsPerSecond: number;
  readonly readBurst: number;
  /** Largest body POSTed to a callback URL, in bytes (413 above it). */
  readonly maxCallbackBodyBytes: number;
  /** POSTs to callback URLs per client address per second (429 above it). */
  readonly callbackPostsPerSecond: number;
  /** POSTs to one callback URL per minute, whoever sends them (429 above it). */
  readonly callbackPostsPerTokenPerMinute: number;
  /** Open HTTP connections (`server.maxConnections`). */
  readonly maxConnections: number;
  /** Time for a client to send the request headers. */
  readonly headersTimeoutMs: number;
  /** Time for a client to send the whole request (not the response: streams stay open). */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * The bounds a server applies when `limits` (or the `MCP_TASK_<NAME>` variables) leave one unset:
 * each is large enough for ordinary use and small enough that one caller cannot exhaust a
 * process. `docs/guide/error-codes.md` lists the error each one answers with.
 */
export const DEFAULT_LIMITS: TaskServerLimits = {
  maxBodyBytes: 4 * MIB,
  maxJsonDepth: 64,
  maxArgumentBytes: 1 * MIB,
  maxAnswerBytes: 64 * KIB,
  maxResultBytes: 4 * MIB,
  maxListPageBytes: 1 * MIB,
  maxLiveTasksPerPrincipal: 1000,
  maxRunningTasksPerPrincipal: 64,
  maxSessionsPerPrincipal: 100,
  maxListenStreamsPerPrincipal: 100,
  maxBlockingResultsPerPrincipal: 100,
  maxTaskIdsPerListen: 1000,
  maxChildrenPerTask: 1000,
  createsPerSecond: 50,
  createBurst: 100,
  readsPerSecond: 500,
  readBurst: 1000,
  maxCallbackBodyBytes: 64 * KIB,
  callbackPostsPerSecond: 20,
  callbackPostsPerTokenPerMinute: 10,
  maxConnections: 1000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

/**
 * Upper bounds of the limits that have one beyond "a positive whole number": a running-task
 * share above this is a typo, not a policy (no fleet runs that many of one caller's tasks).
 */
export const LIMIT_MAXIMUMS: Partial<Record<keyof TaskServerLimits, number>> = {
  maxRunningTasksPerPrincipal: 100_000,
};

/** `maxBodyBytes` → `MCP_TASK_MAX_BODY_BYTES`. */
export function environmentName(limit: keyof TaskServerLimits): string {
  return `MCP_TASK_${limit.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;
}

/** The limits the environment sets; a value that is not a positive whole number is an error naming the variable. */
export function limitsFromEnvironment(env: NodeJS.ProcessEnv = process.env): Partial<TaskServerLimits> {
  const found: Partial<Record<keyof TaskServerLimits, number>> = {};
  for (const limit of Object.keys(DEFAULT_LIMITS) as (keyof TaskServerLimits)[]) {
    const raw = env[environmentName(limit)];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0) {
      throw new RangeError(`${environmentName(limit)} must be a positive whole number, got ${JSON.stringify(raw)}`);
    }
    const maximum = LIMIT_MAXIMUMS[limit];
    if (maximum !== undefined && value > maximum) {
      throw new RangeError(`${environmentName(limit)} must be at most ${maximum}, got ${JSON.stringify(raw)}`);
    }
    found[limit] = value;
  }
  return found;
}

export function resolveLimits(given: Partial<TaskServerLimits> = {}): TaskServerLimits {
  const limits = { ...DEFAULT_LIMITS, ...given };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new RangeError(`limits.${name} must be a positive whole number, got ${String(value)}`);
    }
    const maximum = LIMIT_MAXIMUMS[name as keyof TaskServerLimits];
    if (maximum !== undefined && value > maximum) {
      throw new RangeError(`limits.${name} must be at most ${maximum}, got ${String(value)}`);
    }
  }
  return limits;
}
