/**
 * `createTaskServer()`: the one call an app makes. It binds the generated manifest to the
 * app's instances, picks a runtime, and serves both task dialects over Streamable HTTP and
 * stdio. Task logic lives in the engine and the adapters; this file only assembles them.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestStateCodec, type Server } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import {
  DASHBOARD_PATH,
  type DashboardOptions,
  dashboardFromEnvironment,
  dashboardRoutes,
} from '../dashboard/routes.js';
import { TaskTimelines } from '../dashboard/timeline.js';
import { TaskEngine } from '../engine/engine.js';
import { observeAll } from '../engine/lifecycle.js';
import type { TaskPolicy } from '../engine/policy.js';
import type { TaskExecutor, TaskRuntime } from '../engine/runtime.js';
import { type ClientConnection, clientAddressResolver } from '../http/client-address.js';
import type { Answer } from '../http/json-answer.js';
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { createPinoLogger, LogOutput, loggerFromPino, logObserver, type PinoLike, toLogger } from '../observe/log.js';
import { type Logger, silentLogger } from '../observe/logger.js';
import { metricsFromEnvironment, type RefusalReason, TaskMetrics } from '../observe/metrics.js';
import {
  DEFAULT_COMPANION_PREFIX,
  DEFAULT_UNAWARE_GRACE_MS,
  type UnawareClientMode,
  UnawareClients,
} from '../protocol/companion-tools.js';
import type { InlineState } from '../protocol/inline-state.js';
import { QuestionLedger } from '../protocol/question-ledger.js';
import { Sep1686Dialect } from '../protocol/sep-1686.js';
import { Tasks2025Dialect } from '../protocol/tasks-2025.js';
import { Tasks2026Dialect } from '../protocol/tasks-2026.js';
import { ToolCalls } from '../protocol/tool-calls.js';
import {
  closeClient,
  createRedisClient,
  DEFAULT_PREFIX,
  DEFAULT_QUEUE,
  type RedisClient,
} from '../runtime/bullmq/index.js';
import { MemorySlotLedger } from '../runtime/memory/slot-ledger.js';
import type { TaskManifest } from '../tools/definition.js';
import { ToolRegistry } from '../tools/registry.js';
import { callbackRoute, callbackTokenOf, warnIfProxyUntrusted } from './callback-route.js';
import { HttpFront, type HttpFrontOptions } from './http-front.js';
import { resolveLimits, type TaskServerLimits } from './limits.js';
import { ModernRequestPath } from './modern-request-path.js';
import {
  badTargetResponse,
  hangupOf,
  readNodeJsonBody,
  requestHead,
  requestUrl,
  streamingRequest,
  writeResponse,
} from './node-http.js';
import { checkOf, operatorRoutes, type Route, warnIfMetricsOpen } from './operator-routes.js';
import { defaultPrincipalResolver, type PrincipalResolver } from './principal.js';
import { PrincipalSlots } from './principal-slots.js';
import {
  createKeptModernHandlers,
  createProtocolServer,
  type ProtocolRevision,
  type ProtocolServerDeps,
  revisionOfEra,
} from './protocol-server.js';
import { attachQuestionPush, type QuestionPush } from './question-push.js';
import { comfortablePollMs, RateLimits } from './rate-limits.js';
import { chooseRuntime, describeRuntime, type RedisSetup, type RuntimeChoice, redisSetup } from './runtime-choice.js';
import { attachStatusPush } from './status-push.js';
import { WaiterRegistry, type WaiterStats } from './waiters.js';

/**
 * What `createTaskServer` needs: the generated manifest and the instances its tools run on.
 * Everything else has a default that suits one process on a laptop: the in-process runtime,
 * pino logs on stdout, the limits in `DEFAULT_LIMITS`, no metrics and no dashboard.
 */
export interface TaskServerOptions extends RuntimeChoice {
  /** The `taskManifest` exported by the module `mcp-taskgen` generated. */
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes. Each tool runs on the instance of its class. */
  readonly instances: readonly object[];
  /** `serverInfo`. Defaults: `mcp-task-server`, `0.0.0`. */
  readonly name?: string;
  readonly version?: string;
  readonly title?: string;
  readonly instructions?: string;
  /**
   * A runtime of your own, or a factory that receives the executor for your tools. Default:
   * BullMQ when `redis` is set, else the in-process runtime (tasks end with the process).
   */
  readonly runtime?: TaskRuntime | ((executor: TaskExecutor) => TaskRuntime);
  /** Retention and polling limits. */
  readonly policy?: Partial<TaskPolicy>;
  /**
   * The time tasks are stamped and expired by (default `Date.now`). Tests move it to reach a
   * TTL without waiting; the BullMQ runtime expires records by Redis time and ignores it.
   */
  readonly clock?: () => number;
  /**
   * Tells of moves of `clock` that skip time (a test clock), so that sleeps on the in-process
   * runtime due by then wake at once. Returns how to stop listening.
   */
  readonly clockAdvances?: (listener: () => void) => () => void;
  /** Tasks per `tasks/list` page (default 50). */
  readonly listPageSize?: number;
  /**
   * Also serve the original SEP-1686 form (`_meta["modelcontextprotocol.io/task"]` with a
   * client-chosen id, `notifications/tasks/created`, `tasks/delete`) on 2025-11-25 connections.
   * Historical and off by default: without it that `_meta` key is ignored.
   */
  readonly sep1686?: boolean;
  /**
   * The key (at least 32 bytes) that seals the state a 2026-07-28 call without a task carries
   * between its rounds (its `ctx.step` results and answers), so a client cannot forge them.
   * Default: `MCP_REQUEST_STATE_KEY` when `runTaskServer` reads it, else a random key per
   * process; several server processes behind one address need the same key.
   */
  readonly requestStateKey?: string;
  /** Who owns a task. See `defaultPrincipalResolver`. */
  readonly resolvePrincipal?: PrincipalResolver;
  readonly http?: HttpFrontOptions;
  /**
   * Bounds on what one caller may send, hold and ask for; each has a documented default (see
   * `DEFAULT_LIMITS` and the README's "Limits" table). `runTaskServer` also reads them from
   * `MCP_TASK_<NAME>` environment variables.
   */
  readonly limits?: Partial<TaskServerLimits>;
  /**
   * Where lines go: the framework's `Logger`, or a pino(-compatible) logger of the app. Default:
   * pino, JSON lines on stdout (readable in a terminal; stderr once serving stdio), level from
   * `MCP_TASK_LOG_LEVEL`, one line per task lifecycle event.
   */
  readonly logger?: Logger | PinoLike;
  /**
   * Prometheus metrics at `/metrics` (default: on when `MCP_TASK_METRICS=1`). `token` puts them
   * behind `Authorization: Bearer <token>` (default: `MCP_TASK_METRICS_TOKEN`).
   */
  readonly metrics?: boolean | MetricsOptions;
  /**
   * A task dashboard at `/dashboard` (default: on when `MCP_TASK_DASHBOARD=1`), behind the same
   * auth as `/mcp`: each principal sees its own tasks; `admins` may look at anyone's.
   */
  readonly dashboard?: boolean | DashboardOptions;
  /** Where the default logger writes before `serveStdio` moves it to stderr (default `stdout`). */
  readonly logDestination?: 'stdout' | 'stderr';
  /**
   * What callers whose client cannot receive a task get from task tools (see
   * docs/guide/clients-without-tasks.md). `runTaskServer` reads `MCP_TASK_UNAWARE_CLIENTS`
   * and `MCP_TASK_UNAWARE_GRACE_MS`.
   */
  readonly unawareClients?: UnawareClientsOptions;
  /**
   * The base URL the outside world reaches this server at (`https://tasks.example.com`): callback
   * URLs are `<publicUrl>/callbacks/<token>` (see `ctx.callback`). Default: `MCP_TASK_PUBLIC_URL`;
   * without either, `ctx.callback` refuses with an error saying so. Every server and worker
   * process of an app should use the same.
   */
  readonly publicUrl?: string;
}

/** Settings for callers that cannot receive a task (`TaskServerOptions.unawareClients`). */
export interface UnawareClientsOptions {
  /**
   * The server-wide mode: `auto`, `handle` or `inline`. Unset: `auto` for task-support
   * `optional` tools, and `required` tools refuse such callers as before; set to `auto` or
   * `handle`, it applies to `required` tools too. A tool's `@Task({ unawareClients })` wins.
   */
  readonly mode?: UnawareClientMode;
  /** How long `auto` waits for the task before answering with the handle (default 10 000 ms). */
  readonly graceMs?: number;
  /** Prefix of the companion tools' names (default `task_`: `task_status`, `task_wait`, ...). */
  readonly toolPrefix?: string;
  /**
   * A call that asked for progress gets a notification at least this often while it runs
   * inline or waits for its task (default 10 000 ms).
   */
  readonly keepAliveMs?: number;
}

/** The longest grace time: a grace near the common 60 s host timeout would get calls cut off. */
export const MAX_UNAWARE_GRACE_MS = 50_000;

function unawareClientsOf(calls: ToolCalls, options: UnawareClientsOptions = {}): UnawareClients {
  const graceMs = options.graceMs ?? DEFAULT_UNAWARE_GRACE_MS;
  if (!Number.isFinite(graceMs) || graceMs < 0 || graceMs > MAX_UNAWARE_GRACE_MS) {
    throw new RangeError(
      `unawareClients.graceMs must be a number of milliseconds from 0 to ${MAX_UNAWARE_GRACE_MS}, not ${graceMs}`,
    );
  }
  const keepAliveMs = options.keepAliveMs;
  if (keepAliveMs !== undefined && (!Number.isFinite(keepAliveMs) || keepAliveMs < 10 || keepAliveMs > 60_000)) {
    throw new RangeError(`unawareClients.keepAliveMs must be from 10 to 60000 milliseconds, not ${keepAliveMs}`);
  }
  if (options.mode !== undefined && !['auto', 'handle', 'inline'].includes(options.mode)) {
    throw new RangeError(`unawareClients.mode must be 'auto', 'handle' or 'inline', not ${String(options.mode)}`);
  }
  return new UnawareClients(calls, {
    ...(options.mode !== undefined && { mode: options.mode }),
    graceMs,
    prefix: options.toolPrefix ?? DEFAULT_COMPANION_PREFIX,
  });
}

/**
 * How `/metrics` is served. `token` puts the Prometheus text behind
 * `Authorization: Bearer <token>`; without one the route is open, and a server listening beyond
 * loopback warns about that at start-up.
 */
export interface MetricsOptions {
  readonly token?: string;
}

/** Where `TaskServer.listen` serves Streamable HTTP. */
export interface ListenOptions {
  /** Default: `PORT` from the environment, else 3000. `0` picks a free port. */
  readonly port?: number;
  /** Default: `HOST` from the environment, else 127.0.0.1. */
  readonly host?: string;
  /** Default: `/mcp`. */
  readonly path?: string;
}

/**
 * A Streamable HTTP listener started by `TaskServer.listen`: its address (`url` ends with the
 * MCP path, ready to hand to a client) and how to stop it.
 */
export interface ListeningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections and closes open sessions (the task server stays usable). */
  close(): Promise<void>;
}

/**
 * A task server, made by `createTaskServer`: serve it over Streamable HTTP (`listen`, or
 * `fetch` inside a host of your own), over stdio (`serveStdio`), or both. `engine`, `registry`
 * and `runtime` are exposed for tests and tooling; an app does not need them.
 */
export interface TaskServer {
  readonly engine: TaskEngine;
  readonly registry: ToolRegistry;
  readonly runtime: TaskRuntime;
  /**
   * Serves one web-standard request (mount it in Hono, Bun, Workers-style hosts or tests).
   * `connection.remoteAddress` is the client's address where the host knows it: without auth,
   * callers are rate-limited by it (without it, all anonymous callers share one budget).
   */
  fetch(request: Request, connection?: ClientConnection): Promise<Response>;
  /** Serves Streamable HTTP on node:http. */
  listen(options?: ListenOptions): Promise<ListeningServer>;
  /** Serves this process's stdin/stdout. */
  serveStdio(): StdioServerHandle;
  /**
   * What this process holds open for clients right now: blocking `tasks/result` calls and
   * listen streams per session, and the engine's task followers. For debugging and leak checks;
   * every count returns to zero once its clients are gone.
   */
  stats(): TaskServerStats;
  /** Closes listeners, sessions and the runtime. */
  close(): Promise<void>;
}

/**
 * What `TaskServer.stats` counts: the requests and streams the HTTP front holds open, and the
 * engine's followers of task changes.
 */
export interface TaskServerStats {
  readonly waiters: WaiterStats;
  readonly engine: ReturnType<TaskEngine['waiterStats']>;
}

/**
 * Builds a task server for the tools in `manifest`, run on `instances`. Nothing listens yet:
 * call `listen()` for Streamable HTTP or `serveStdio()` for stdio. The runtime is BullMQ when
 * `redis` is set, else in-process (tasks end with the process).
 *
 * Throws `ManifestError` when the manifest and the loaded classes disagree (a stale
 * `mcp-taskgen` output, a missing instance), and `RangeError` for contradictory settings such as
 * `workers: 0` without Redis, so a misconfigured server never accepts traffic. `runTaskServer`
 * does the same and also reads the environment and handles signals.
 *
 * @example
 * ```ts
 * import { createTaskServer } from 'mcp-task-server';
 * import { taskManifest } from './__generated__/tasks.generated.js';
 * import { Reports } from './reports.js';
 *
 * const server = createTaskServer({ manifest: taskManifest, instances: [new Reports()] });
 * const { url } = await server.listen({ port: 3000 });
 * console.error(`MCP endpoint: ${url}`);
 * // Later: await server.close();
 * ```
 */
export function createTaskServer(options: TaskServerOptions): TaskServer {
  const output = options.logger ? undefined : new LogOutput();
  if (options.logDestination === 'stderr') output?.useStderr();
  const logger = options.logger
    ? toLogger(options.logger)
    : loggerFromPino(createPinoLogger({ role: 'server', ...(output && { output }) }));
  const metricsOption = options.metrics ?? metricsFromEnvironment();
  const metricsToken =
    (typeof metricsOption === 'object' ? metricsOption.token : undefined) ??
    (process.env.MCP_TASK_METRICS_TOKEN || undefined);
  // Built before the runtime and the front it reads from: it reads them only when scraped.
  const metrics = metricsOption
    ? new TaskMetrics({
        stats: async () => (await runtime.stats?.()) ?? {},
        sessions: () => httpFront.sessionCount,
        streams: () => httpFront.streamCount,
        waits: () => {
          const engineStats = engine.waiterStats();
          return {
            waiters: waiters.stats().total,
            engineWaits: engineStats.waiters,
            followers: engineStats.followers,
            followedTasks: engineStats.followedTasks,
          };
        },
      })
    : undefined;
  const dashboardOption = options.dashboard ?? dashboardFromEnvironment();
  // The dashboard's timelines hear the lifecycle events too: timeouts, repeated creates, waits.
  const timelines = dashboardOption ? new TaskTimelines(options.clock) : undefined;
  // A silenced logger needs no lifecycle lines built for it (benchmarks, tests).
  const observer = observeAll([
    logger === silentLogger ? undefined : logObserver(logger, 'server'),
    metrics,
    timelines,
  ]);
  const limits = resolveLimits(options.limits);
  const publicUrl = options.publicUrl ?? (process.env.MCP_TASK_PUBLIC_URL || undefined);
  const registry = new ToolRegistry({
    manifest: options.manifest,
    instances: options.instances,
    logger,
    observer,
    maxResultBytes: limits.maxResultBytes,
    ...(publicUrl !== undefined && { publicUrl }),
    maxArgumentBytes: limits.maxArgumentBytes,
  });
  const runtime =
    typeof options.runtime === 'function'
      ? options.runtime(registry)
      : (options.runtime ?? chooseRuntime(options, registry, logger, observer, options.clock, options.clockAdvances));
  const engine = new TaskEngine({
    runtime,
    ...(options.clock && { clock: options.clock }),
    policy: {
      maxLiveTasksPerOwner: limits.maxLiveTasksPerPrincipal,
      maxRunningTasksPerOwner: limits.maxRunningTasksPerPrincipal,
      maxChildrenPerTask: limits.maxChildrenPerTask,
      ...options.policy,
    },
    maxListPageBytes: limits.maxListPageBytes,
    // A suggested poll interval never outpaces what the read rate limit comfortably allows.
    pollFloorMs: comfortablePollMs(limits),
    ...(options.listPageSize !== undefined && { pageSize: options.listPageSize }),
    observer,
  });
  // Children `ctx.spawn` starts in this process go through this engine's ordinary create.
  registry.spawnWith(engine);
  const calls = new ToolCalls(engine, registry, limits);
  const unaware = unawareClientsOf(calls, options.unawareClients);
  const principals = options.resolvePrincipal ?? defaultPrincipalResolver;
  // On Redis the rate counters are shared by every server process of the app.
  const rateStore = options.redis && !options.runtime ? rateLimitStore(redisSetup(options.redis), logger) : undefined;
  const rateLimits = new RateLimits(limits, rateStore);
  const waiters = new WaiterRegistry();
  // The caps on what callers hold open are counted where the runtime says: on Redis across
  // every server process; in this process's memory otherwise.
  const slotLedger = runtime.slots ?? new MemorySlotLedger();
  const requestStateCodec = createRequestStateCodec<InlineState>({
    key: options.requestStateKey ?? randomBytes(32).toString('base64url'),
    // As long as a person may take to answer an inline question.
    ttlSeconds: 600,
  });
  const deps: ProtocolServerDeps = {
    engine,
    tasks2025: new Tasks2025Dialect(calls),
    tasks2026: new Tasks2026Dialect(calls),
    ...(options.sep1686 && { sep1686: new Sep1686Dialect(calls) }),
    resolvePrincipal: principals,
    serverInfo: {
      name: options.name ?? 'mcp-task-server',
      version: options.version ?? '0.0.0',
      ...(options.title !== undefined && { title: options.title }),
    },
    ...(options.instructions !== undefined && { instructions: options.instructions }),
    logger,
    rateLimits,
    blockingSlots: new PrincipalSlots({
      ledger: slotLedger,
      cap: 'blocking',
      limit: limits.maxBlockingResultsPerPrincipal,
      limitName: 'maxBlockingResultsPerPrincipal',
      what: 'blocking waits (tasks/result, task_wait)',
      logger,
      ...(metrics && { onCountedLocally: (cap: string) => metrics.slotCountedLocally(cap) }),
    }),
    waiters,
    requestStateCodec,
    unaware,
    ...(options.unawareClients?.keepAliveMs !== undefined && { keepAliveMs: options.unawareClients.keepAliveMs }),
    ...(metrics && {
      onRequest: (method: string, outcome: number | 'ok') => {
        metrics.rpcRequest(method, outcome);
        const refusal = refusalOf(outcome);
        if (refusal) metrics.refused(refusal);
      },
    }),
  };

  /** Each 2025 session's question push, found by its server when its standalone stream opens or closes. */
  const questionPushes = new WeakMap<Server, QuestionPush>();
  const serverFor = (unit: {
    revision: ProtocolRevision;
    listTasks: boolean;
    transport: 'http' | 'stdio';
    clientAddress?: string;
  }): Server => {
    if (unit.revision === '2026-07-28') return createProtocolServer(deps, { ...unit });
    // A 2025 session lives as long as its connection: push its tasks' status and questions
    // while it does. Its ledger makes each question reach the client once, on whichever channel.
    let push: ReturnType<typeof attachStatusPush> | undefined;
    let questions: QuestionPush | undefined;
    const questionLedger = new QuestionLedger();
    const server = createProtocolServer(deps, {
      ...unit,
      questionLedger,
      onTaskCreated: (taskId, caller, progressToken) => {
        push?.track(taskId, caller, progressToken);
        questions?.track(taskId, caller);
      },
    });
    push = attachStatusPush(server, engine);
    // Over stdio the standalone stream is stdout, open for the connection's whole life.
    questions = attachQuestionPush(server, {
      engine,
      calls,
      ledger: questionLedger,
      streamOpen: unit.transport === 'stdio',
    });
    questionPushes.set(server, questions);
    const previousOnClose = server.onclose;
    server.onclose = () => {
      push?.detach();
      questions?.detach();
      previousOnClose?.();
    };
    return server;
  };

  const httpFront = new HttpFront(
    (unit) => serverFor({ ...unit, transport: 'http' }),
    {
      engine,
      principals,
      logger,
      limits,
      rateLimits,
      waiters,
      slots: slotLedger,
      ...(metrics && { onSlotCountedLocally: (cap: string) => metrics.slotCountedLocally(cap) }),
      onStandaloneStream: (server, open) => questionPushes.get(server)?.standaloneStream(open),
      readTools: unaware.companionNames(),
      // One set of 2026-07-28 handlers for the process; each request brings its own context.
      modernPath: new ModernRequestPath(createKeptModernHandlers(deps)),
      ...(metrics && { onRefused: (reason: RefusalReason) => metrics.refused(reason) }),
    },
    options.http,
  );
  const listeners = new Set<ListeningServer>();
  const stdioHandles = new Set<StdioServerHandle>();
  let closing = false;
  const operator: Route = operatorRoutes({
    readiness: async () => ({
      runtime: await checkOf(async () => runtime.checkReady?.()),
      manifest: registry.list().length > 0 ? 'ok' : 'the manifest lists no tools',
      shutdown: closing ? 'shutting down' : 'ok',
    }),
    ...(metrics && { metrics }),
    ...(metricsToken !== undefined && { metricsToken }),
    logger,
  });
  const dashboard = dashboardOption
    ? dashboardRoutes({
        engine,
        ...(timelines && { timelines }),
        calls,
        admit: (request, connection) => httpFront.admit(request, connection),
        rateLimits,
        ...(metrics && { onRefused: (reason: RefusalReason) => metrics.refused(reason) }),
        ...(typeof dashboardOption === 'object' && { options: dashboardOption }),
      })
    : undefined;
  const callbacks = callbackRoute({
    engine,
    check: (tool, name, payload) => registry.checkCallbackPayload(tool, name, payload),
    limits,
    clientAddress: clientAddressResolver(options.http?.trustProxy),
    observer,
    logger,
    ...(rateStore && { store: rateStore }),
    ...(metrics && { onRefused: (reason: RefusalReason) => metrics.refused(reason) }),
  });
  /** Operator routes first; `mcp` serves the rest. Every answer is counted when metrics are on. */
  const dispatch = async <A extends Answer>(
    request: Request,
    mcp: (request: Request) => Promise<A>,
    connection: ClientConnection | undefined,
  ): Promise<A | Response> => {
    const url = new URL(request.url);
    let response: A | Response;
    try {
      response =
        (await operator(request, url)) ??
        (await callbacks(request, url, connection)) ??
        (await dashboard?.handle(request, url, connection)) ??
        (await mcp(request));
    } catch (error) {
      // A callback URL's token is its only capability: never in a log line.
      logger.error('HTTP request failed', { err: error, path: withoutCallbackToken(url.pathname) });
      response = Response.json({ error: 'internal error' }, { status: 500 });
    }
    metrics?.httpRequest(request.method, response.status);
    return response;
  };
  logger.info(describeRuntime(runtime, options.workers));
  warnIfProxyUntrusted(logger, { publicUrl, trustProxy: options.http?.trustProxy });

  return {
    engine,
    registry,
    runtime,
    fetch: (request, connection) => dispatch(request, (forward) => httpFront.fetch(forward, connection), connection),
    stats: () => ({ waiters: waiters.stats(), engine: engine.waiterStats() }),

    async listen(listen = {}) {
      const path = listen.path ?? '/mcp';
      const host = listen.host ?? process.env.HOST ?? '127.0.0.1';
      const port = listen.port ?? (process.env.PORT ? Number(process.env.PORT) : 3000);
      // The MCP endpoint: one Request serves admission and the call, and the body is read
      // (bounded) from the socket only once the front admitted its headers (see node-http.ts).
      const serveEndpoint: ServeOnNode = async (req, res, url, connection) => {
        const hangup = hangupOf(res);
        const request = requestHead(req, url, hangup);
        const admission = await httpFront.admit(request, connection);
        if (admission instanceof Response) {
          metrics?.httpRequest(req.method ?? 'POST', admission.status);
          await writeWithoutBody(res, admission);
          return;
        }
        const body = await readNodeJsonBody(req, limits);
        const admitted = { ...admission, hangup };
        const answer = await dispatch(request, (forward) => httpFront.answer(forward, admitted, body), connection);
        await writeResponse(res, answer, hangup);
      };
      // Every other route (callbacks, operator routes, the dashboard, 404s): the body streams
      // from the socket, read only by a route that wants it and within its own bound (callbacks:
      // after their rate limits, within `maxCallbackBodyBytes`; the dashboard: its own).
      const serveRoutes: ServeOnNode = async (req, res, url, connection) => {
        const hangup = hangupOf(res);
        const request = streamingRequest(req, url, hangup);
        const response = await dispatch(request, async () => notFoundResponse(path), connection);
        // A body no route read is not drained for the next request on this connection.
        if (!req.complete) res.setHeader('connection', 'close');
        await writeResponse(res, response, hangup);
      };
      // Timeouts are checked this often (Node's default, 30 s, would let a slow client hold a
      // connection for up to 30 s past its timeout).
      const checkEvery = Math.min(1000, limits.headersTimeoutMs, limits.requestTimeoutMs);
      const server = http.createServer({ connectionsCheckingInterval: checkEvery }, (req, res) => {
        const connection: ClientConnection = {
          ...(req.socket.remoteAddress && { remoteAddress: req.socket.remoteAddress }),
        };
        // The path is the request line's alone: the Host header picks no route (see `requestUrl`).
        const url = requestUrl(req.url);
        if (!url) {
          metrics?.httpRequest(req.method ?? 'GET', 400);
          void writeWithoutBody(res, badTargetResponse());
          return;
        }
        const serve = url.pathname === path ? serveEndpoint : serveRoutes;
        serve(req, res, url, connection).catch((error: unknown) => {
          // The socket failed while the body was read or the answer written: nothing to answer.
          logger.debug('HTTP request abandoned', { error: error instanceof Error ? error.message : String(error) });
          res.destroy();
        });
      });
      server.maxConnections = limits.maxConnections;
      server.headersTimeout = limits.headersTimeoutMs;
      server.requestTimeout = limits.requestTimeoutMs;
      server.keepAliveTimeout = limits.keepAliveTimeoutMs;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const listening: ListeningServer = {
        url: `http://${shownHost}:${address.port}${path}`,
        port: address.port,
        close: () =>
          new Promise<void>((resolve) => {
            listeners.delete(listening);
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
      listeners.add(listening);
      if (dashboard) logger.info(`task dashboard at http://${shownHost}:${address.port}${DASHBOARD_PATH}`);
      warnIfMetricsOpen(logger, { metrics: metrics !== undefined, token: metricsToken !== undefined, host });
      return listening;
    },

    serveStdio() {
      output?.useStderr();
      const handle = sdkServeStdio(({ era }) =>
        serverFor({ revision: revisionOfEra(era), listTasks: true, transport: 'stdio' }),
      );
      stdioHandles.add(handle);
      return handle;
    },

    async close() {
      closing = true;
      dashboard?.close();
      await Promise.allSettled([...listeners].map((listening) => listening.close()));
      await Promise.allSettled([...stdioHandles].map((handle) => handle.close()));
      await httpFront.close();
      await runtime.close();
      if (rateStore) await closeClient(rateStore.redis);
    },
  };
}

/** Serves one request on node:http, at its `url` (from `requestUrl`), for `connection`. */
type ServeOnNode = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  connection: ClientConnection,
) => Promise<void>;

/** What a path the server has no route for gets. */
function notFoundResponse(path: string): Response {
  return new Response(`Not found. The MCP endpoint is ${path}\n`, {
    status: 404,
    headers: { 'content-type': 'text/plain' },
  });
}

/** `pathname` with a callback URL's token masked, for logs. */
function withoutCallbackToken(pathname: string): string {
  const token = callbackTokenOf(pathname);
  return token === undefined ? pathname : `${pathname.slice(0, pathname.length - token.length)}…`;
}

/** Which refusal a JSON-RPC error code stands for, if any (for `mcp_task_refusals_total`). */
function refusalOf(outcome: number | 'ok'): RefusalReason | undefined {
  if (outcome === JsonRpcErrorCode.LimitExceeded) return 'quota';
  if (outcome === JsonRpcErrorCode.RateLimited) return 'rate_limit';
  return undefined;
}

/** The Redis connection the rate limits count in, under the app's key prefix. */
function rateLimitStore(setup: RedisSetup, logger: Logger): { redis: RedisClient; prefix: string } {
  return {
    redis: createRedisClient(setup.connection, 'request', logger, 'rate-limits'),
    prefix: `${setup.prefix ?? DEFAULT_PREFIX}::${setup.queue ?? DEFAULT_QUEUE}`,
  };
}

/** Answers a refused request without reading its body, and closes the connection so none is drained. */
async function writeWithoutBody(res: http.ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  headers.connection = 'close';
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}
