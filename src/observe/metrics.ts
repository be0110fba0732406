/**
 * Prometheus metrics (prom-client), one registry per server or worker process so that several
 * servers in one process (tests, embedding apps) never count into each other. Counters move on
 * lifecycle events; gauges (tasks by status, queue depth, sessions, streams, waiters) are read
 * when scraped, so an idle process does no work for them.
 */
import { createRequire } from 'node:module';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { LifecycleEvent, TaskObserver } from '../engine/lifecycle.js';
import type { RuntimeStats } from '../engine/runtime.js';

/** Why a request was refused before it reached the engine. */
export type RefusalReason = 'rate_limit' | 'quota' | (string & {});

/** Seconds: from a blink to a day, for tasks that run from milliseconds to hours. */
const DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 5, 15, 60, 300, 900, 3600, 14_400, 86_400];

export interface MetricsSources {
  /** Tasks and jobs by state, from the runtime (omit when the process has none). */
  readonly stats?: () => Promise<RuntimeStats>;
  /** Open 2025-11-25 sessions. */
  readonly sessions?: () => number;
  /** Open streams (2026 listen streams, dashboard event streams). */
  readonly streams?: () => number;
  /** What waits on tasks in this process right now (the numbers of `TaskServer.stats()`). */
  readonly waits?: () => WaitCounts;
}

/** What waits on tasks in one process: each count falls back to zero once its clients are gone. */
export interface WaitCounts {
  /** Requests waiting for a task: `result` (blocking `tasks/result`, SEP-1686 calls), `stream` (listen streams). */
  readonly waiters: Readonly<Record<'result' | 'stream', number>>;
  /** The engine's waits for a task state (each blocking request, each question relay round). */
  readonly engineWaits: number;
  /** Task followers (waits, listen streams, 2025 status push) and the task ids they follow. */
  readonly followers: number;
  readonly followedTasks: number;
}

/** prom-client, loaded when a process turns metrics on: the others never pay for it. */
function promClient(): typeof import('prom-client') {
  return createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
}

export class TaskMetrics implements TaskObserver {
  readonly registry: Registry;
  private readonly created: Counter<'tool'>;
  private readonly idempotentHits: Counter<'tool'>;
  private readonly completed: Counter<'tool'>;
  private readonly failed: Counter<'tool' | 'kind'>;
  private readonly cancelled: Counter<'tool'>;
  private readonly expired: Counter<'tool'>;
  private readonly outputInvalid: Counter<'tool'>;
  private readonly retries: Counter<'tool'>;
  private readonly timeouts: Counter<'tool'>;
  private readonly orphans: Counter<'tool'>;
  private readonly duration: Histogram<'tool' | 'outcome'>;
  private readonly queueWait: Histogram<'tool'>;
  private readonly httpRequests: Counter<'method' | 'status'>;
  private readonly rpcRequests: Counter<'method' | 'code'>;
  private readonly refusals: Counter<'reason'>;
  private readonly slotsCountedLocally: Counter<'cap'>;

  constructor(sources: MetricsSources = {}) {
    const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } = promClient();
    this.registry = new Registry();
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Counter<L>({ name, help, labelNames, registers });
    this.created = counter('mcp_task_created_total', 'Tasks created, by tool.', ['tool']);
    this.idempotentHits = counter(
      'mcp_task_idempotent_hits_total',
      'Repeated idempotent creates answered with the existing task, by tool.',
      ['tool'],
    );
    this.completed = counter('mcp_task_completed_total', 'Task runs that completed, by tool.', ['tool']);
    this.failed = counter('mcp_task_failed_total', 'Task runs that failed, by tool and kind (tool_error, error).', [
      'tool',
      'kind',
    ]);
    this.cancelled = counter('mcp_task_cancelled_total', 'Tasks cancelled by their caller, by tool.', ['tool']);
    this.expired = counter('mcp_task_expired_total', 'Tasks dropped at the end of their TTL, by tool.', ['tool']);
    this.outputInvalid = counter(
      'mcp_task_output_invalid_total',
      'Results that did not match the tool’s declared output type, by tool.',
      ['tool'],
    );
    this.retries = counter(
      'mcp_task_retries_total',
      'Failed attempts that the tool’s retry policy runs again, by tool.',
      ['tool'],
    );
    this.timeouts = counter('mcp_task_timeouts_total', 'Attempts that reached the tool’s timeoutMs, by tool.', [
      'tool',
    ]);
    this.orphans = counter(
      'mcp_task_orphan_jobs_total',
      'Jobs a worker failed because their task record never appeared (see the orphaned log line), by tool.',
      ['tool'],
    );
    this.duration = new Histogram({
      name: 'mcp_task_duration_seconds',
      help: 'From task creation to the end of its work, by tool and outcome.',
      labelNames: ['tool', 'outcome'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.queueWait = new Histogram({
      name: 'mcp_task_queue_wait_seconds',
      help: 'From task creation to the start of its first run, by tool.',
      labelNames: ['tool'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.httpRequests = counter('mcp_task_http_requests_total', 'HTTP requests, by method and status code.', [
      'method',
      'status',
    ]);
    this.rpcRequests = counter(
      'mcp_task_rpc_requests_total',
      'JSON-RPC requests handled, by method and outcome (`ok` or the JSON-RPC error code).',
      ['method', 'code'],
    );
    this.refusals = counter('mcp_task_refusals_total', 'Requests refused by a rate limit or quota, by reason.', [
      'reason',
    ]);
    this.slotsCountedLocally = counter(
      'mcp_task_slots_counted_locally_total',
      'Capped slots (sessions, listen, blocking) counted in this process alone because the slot ledger (Redis) did not answer, by cap.',
      ['cap'],
    );

    const stats = sources.stats;
    if (stats) {
      // One runtime read serves every gauge of a scrape.
      let pending: Promise<RuntimeStats | undefined> | undefined;
      const read = () => {
        pending ??= stats()
          .catch(() => undefined)
          .finally(() => setImmediate(() => (pending = undefined)));
        return pending;
      };
      new Gauge({
        name: 'mcp_task_tasks',
        help: 'Tasks by status right now (working, input_required, parked), where the runtime can count them.',
        labelNames: ['status'],
        registers,
        async collect() {
          this.reset();
          for (const [status, count] of Object.entries((await read())?.tasks ?? {})) this.set({ status }, count);
        },
      });
      new Gauge({
        name: 'mcp_task_queue_jobs',
        help: 'BullMQ jobs by state right now (waiting, active, delayed).',
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          for (const [state, count] of Object.entries((await read())?.queue ?? {})) this.set({ state }, count);
        },
      });
      new Gauge({
        name: 'mcp_task_parked_tasks',
        help: 'Tasks parked without a worker slot right now, by reason (input: waiting for answers; sleep: in a ctx.sleep; callback: waiting for a callback URL; children: waiting for child tasks).',
        labelNames: ['reason'],
        registers,
        async collect() {
          this.reset();
          for (const [reason, count] of Object.entries((await read())?.parked ?? {})) this.set({ reason }, count);
        },
      });
      new Gauge({
        name: 'mcp_task_waiting_by_reason',
        help: 'Tasks that could start but wait, by reason (principal_share: their principal runs its whole share; version: resumed tasks waiting for a worker with the version of their tool).',
        labelNames: ['reason'],
        registers,
        async collect() {
          this.reset();
          for (const [reason, count] of Object.entries((await read())?.waiting ?? {})) this.set({ reason }, count);
        },
      });
    }
    const { sessions, streams } = sources;
    if (sessions) {
      new Gauge({
        name: 'mcp_task_sessions',
        help: 'Open 2025-11-25 sessions.',
        registers,
        collect() {
          this.set(sessions());
        },
      });
    }
    if (streams) {
      new Gauge({
        name: 'mcp_task_streams',
        help: 'Open server-to-client streams (2026 listen streams, dashboard updates).',
        registers,
        collect() {
          this.set(streams());
        },
      });
    }
    const waits = sources.waits;
    if (waits) {
      // Per kind only: per-session counts (in `TaskServer.stats()`) would be unbounded labels.
      new Gauge({
        name: 'mcp_task_waiters',
        help: 'Requests waiting on a task right now, by kind: result (blocking tasks/result, SEP-1686 calls), stream (2026 listen streams).',
        labelNames: ['kind'],
        registers,
        collect() {
          const { result, stream } = waits().waiters;
          this.set({ kind: 'result' }, result);
          this.set({ kind: 'stream' }, stream);
        },
      });
      const plain = (name: string, help: string, read: (counts: WaitCounts) => number) =>
        new Gauge({
          name,
          help,
          registers,
          collect() {
            this.set(read(waits()));
          },
        });
      plain(
        'mcp_task_engine_waits',
        'Waits for a task state in progress in the engine.',
        (counts) => counts.engineWaits,
      );
      plain(
        'mcp_task_followers',
        'Task followers (blocking waits, listen streams, 2025 status push) in this process.',
        (counts) => counts.followers,
      );
      plain(
        'mcp_task_followed_tasks',
        'Task ids followed by this process’s followers.',
        (counts) => counts.followedTasks,
      );
    }
  }

  observe(event: LifecycleEvent): void {
    const tool = event.task.tool;
    switch (event.type) {
      case 'created':
        this.created.inc({ tool });
        return;
      case 'idempotent_hit':
        this.idempotentHits.inc({ tool });
        return;
      case 'started':
        if (!event.resumed) this.queueWait.observe({ tool }, event.queueWaitMs / 1000);
        return;
      case 'completed':
        this.completed.inc({ tool });
        this.duration.observe({ tool, outcome: 'completed' }, event.durationMs / 1000);
        return;
      case 'failed':
        this.failed.inc({ tool, kind: event.kind });
        this.duration.observe({ tool, outcome: 'failed' }, event.durationMs / 1000);
        return;
      case 'cancelled':
        this.cancelled.inc({ tool });
        return;
      case 'expired':
        this.expired.inc({ tool });
        return;
      case 'output_invalid':
        this.outputInvalid.inc({ tool });
        return;
      case 'retry_scheduled':
        this.retries.inc({ tool });
        return;
      case 'timed_out':
        this.timeouts.inc({ tool });
        return;
      case 'orphaned':
        this.orphans.inc({ tool });
        return;
      default:
        return;
    }
  }

  httpRequest(method: string, status: number): void {
    this.httpRequests.inc({ method, status: String(status) });
  }

  rpcRequest(method: string, code: number | 'ok'): void {
    this.rpcRequests.inc({ method, code: String(code) });
  }

  refused(reason: RefusalReason): void {
    this.refusals.inc({ reason });
  }

  /** A capped slot counted in this process alone: the ledger did not answer (see `PrincipalSlots`). */
  slotCountedLocally(cap: string): void {
    this.slotsCountedLocally.inc({ cap });
  }

  /** The text exposition format, and its content type. */
  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/** `MCP_TASK_METRICS=1` (or `true`) turns metrics on where the options leave it open. */
export function metricsFromEnvironment(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.MCP_TASK_METRICS === '1' || env.MCP_TASK_METRICS === 'true';
}
