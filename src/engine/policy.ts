import { DEFAULT_MAX_CHILDREN_PER_TASK } from './children.js';

/** Server-wide limits on retention and polling. Tool options pick values within them. */
export interface TaskPolicy {
  /** Retention when neither the client nor the tool asks for one. */
  readonly defaultTtlMs: number;
  /**
   * Lower bound on any retention (default 1000 ms). A shorter TTL would let a task expire
   * before its creation answers (on Redis, a create round trip can take that long), so both
   * runtimes raise shorter requests to this floor; the task reports the TTL it really has.
   */
  readonly minTtlMs: number;
  /** Upper bound on any retention; `null` allows unlimited retention when asked for. */
  readonly maxTtlMs: number | null;
  readonly defaultPollIntervalMs: number;
  /** Lower bound on the suggested poll interval, so no tool invites a polling storm. */
  readonly minPollIntervalMs: number;
  /**
   * Tasks one principal may have that have not ended (anonymous callers by the budget of their
   * address where the host knows it, see `Caller.liveBudget`, else together);
   * `null` for no bound. A create over it is refused; nothing already accepted is dropped.
   */
  readonly maxLiveTasksPerOwner: number | null;
  /**
   * Tasks of one principal that run at once, across every worker (anonymous callers count
   * together); `null` for no bound. Tasks over it wait their turn; none is refused or dropped.
   */
  readonly maxRunningTasksPerOwner: number | null;
  /**
   * How long an idempotency key keeps returning the task it created; `null` (the default):
   * as long as the task is kept (its TTL). Never longer than the task.
   */
  readonly idempotencyWindowMs: number | null;
  /**
   * Child tasks one task may start with `ctx.spawn` over its life (default 1000). The next
   * spawn is refused with `LIMIT_EXCEEDED` naming the bound; children already started run on.
   */
  readonly maxChildrenPerTask: number;
}

export const DEFAULT_TASK_POLICY: TaskPolicy = {
  defaultTtlMs: 60 * 60 * 1000,
  minTtlMs: 1000,
  maxTtlMs: 24 * 60 * 60 * 1000,
  defaultPollIntervalMs: 1000,
  minPollIntervalMs: 100,
  maxLiveTasksPerOwner: 1000,
  maxRunningTasksPerOwner: 64,
  idempotencyWindowMs: null,
  maxChildrenPerTask: DEFAULT_MAX_CHILDREN_PER_TASK,
};

/**
 * The retention a new task gets. `requested` comes from the client (2025-11-25's `task.ttl`),
 * `toolDefault` from `@Task({ ttlMs })`; `null` in either asks for unlimited.
 */
export function resolveTtl(
  requested: number | null | undefined,
  toolDefault: number | null | undefined,
  policy: TaskPolicy,
): number | null {
  const wanted = requested !== undefined ? requested : toolDefault !== undefined ? toolDefault : policy.defaultTtlMs;
  if (wanted === null) return policy.maxTtlMs;
  const positive = Math.max(1, policy.minTtlMs, Math.floor(wanted));
  return policy.maxTtlMs === null ? positive : Math.min(positive, policy.maxTtlMs);
}

export function resolvePollInterval(toolDefault: number | undefined, policy: TaskPolicy): number {
  return Math.max(policy.minPollIntervalMs, Math.floor(toolDefault ?? policy.defaultPollIntervalMs));
}

/** Refuses a policy whose bounds contradict each other, naming the field. */
export function checkPolicy(policy: TaskPolicy): TaskPolicy {
  if (!Number.isInteger(policy.minTtlMs) || policy.minTtlMs < 1) {
    throw new RangeError(`policy.minTtlMs must be a whole number of milliseconds of 1 or more, got ${policy.minTtlMs}`);
  }
  if (policy.maxTtlMs !== null && policy.maxTtlMs < policy.minTtlMs) {
    throw new RangeError(`policy.maxTtlMs (${policy.maxTtlMs}) must not be below policy.minTtlMs (${policy.minTtlMs})`);
  }
  const running = policy.maxRunningTasksPerOwner;
  if (running !== null && (!Number.isInteger(running) || running < 1)) {
    throw new RangeError(`policy.maxRunningTasksPerOwner must be a whole number of 1 or more, got ${running}`);
  }
  if (!Number.isInteger(policy.maxChildrenPerTask) || policy.maxChildrenPerTask < 0) {
    throw new RangeError(
      `policy.maxChildrenPerTask must be a whole number of 0 or more, got ${policy.maxChildrenPerTask}`,
    );
  }
  const window = policy.idempotencyWindowMs;
  if (window !== null && (!Number.isInteger(window) || window < 1)) {
    throw new RangeError(
      `policy.idempotencyWindowMs must be a whole number of milliseconds of 1 or more, or null, got ${window}`,
    );
  }
  return policy;
}
