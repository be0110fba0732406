/**
 * The SDK `Server` for one serving unit (a 2025 session, a 2026 request on the SDK's path, a stdio
 * connection), wired to the dialect adapters; and the same 2026 handlers built once for the kept
 * request path (`createKeptModernHandlers`), which reads everything of a caller from the context
 * each request brings. Each workaround for the SDK lives
 * here, named where it is applied, and is guarded by test/e2e/sdk-workarounds.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type JSONRPCRequest,
  ProtocolError,
  type RequestStateCodec,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { type Caller, clientTaskKey, type TaskEngine } from '../engine/engine.js';
import type { InputAnswer } from '../engine/task.js';
import { addressBudget, type CallerIdentity } from '../http/client-address.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observe/logger.js';
import { inSpan, SpanKind } from '../observe/tracing.js';
import type { UnawareCallContext, UnawareClients } from '../protocol/companion-tools.js';
import type { InlineState } from '../protocol/inline-state.js';
import { isPlainObject, optionalCursor, type Params, requireTaskId } from '../protocol/params.js';
import type { QuestionLedger } from '../protocol/question-ledger.js';
import { INLINE_QUESTION_TIMEOUT_MS } from '../protocol/question-relay.js';
import { asRpc, toJsonRpcError } from '../protocol/rpc-error.js';
import { isSep1686Task, readSep1686TaskRequest, type Sep1686Dialect, toSep1686Task } from '../protocol/sep-1686.js';
import { type Elicit, serverCapabilities2025, type Tasks2025Dialect, toTask2025 } from '../protocol/tasks-2025.js';
import {
  declaresTasksExtension,
  serverCapabilities2026,
  type Tasks2026CallContext,
  type Tasks2026Dialect,
} from '../protocol/tasks-2026.js';
import type { CallContext } from '../protocol/tool-calls.js';
import type { TaskProgress } from '../tools/context.js';
import type { LogListener } from '../tools/registry.js';
import { type PrincipalResolver, resolvePrincipal } from './principal.js';
import type { PrincipalSlots } from './principal-slots.js';
import { acceptsFormElicitation } from './question-push.js';
import { type RateLimits, rateKindOf } from './rate-limits.js';
import type { WaiterRegistry } from './waiters.js';

/** The protocol revision a connection negotiated; SEP-1686 rides on 2025-11-25 connections. */
export type ProtocolRevision = '2025-11-25' | '2026-07-28';

/** The revision behind the SDK's name for it: its "legacy" era is 2025-11-25 here, "modern" 2026-07-28. */
export function revisionOfEra(era: 'legacy' | 'modern'): ProtocolRevision {
  return era === 'legacy' ? '2025-11-25' : '2026-07-28';
}

export interface ProtocolServerDeps {
  readonly engine: TaskEngine;
  readonly tasks2025: Tasks2025Dialect;
  readonly tasks2026: Tasks2026Dialect;
  /** Present when the app serves the SEP-1686 `_meta` form. */
  readonly sep1686?: Sep1686Dialect;
  readonly resolvePrincipal: PrincipalResolver;
  readonly serverInfo: { readonly name: string; readonly version: string; readonly title?: string };
  readonly instructions?: string;
  readonly logger: Logger;
  /** Per-principal request budgets. HTTP applies them before dispatch (429); stdio here. */
  readonly rateLimits?: RateLimits;
  /** Caps the requests that wait for a task's end (`tasks/result`, SEP-1686 task calls) per principal. */
  readonly blockingSlots?: PrincipalSlots;
  /** Counts the waits this server's handlers hold open (blocking `tasks/result`s). */
  readonly waiters: WaiterRegistry;
  /** Seals and verifies the state a 2026 call without a task carries between its rounds. */
  readonly requestStateCodec?: RequestStateCodec<InlineState>;
  /** Hears how each request ended: `ok` or its JSON-RPC error code (for metrics). */
  readonly onRequest?: (method: string, outcome: number | 'ok') => void;
  /**
   * Handles and companion tools for callers that cannot receive a task (a 2025-11-25 session
   * without the `tasks` capability, a 2026-07-28 request without the tasks extension).
   */
  readonly unaware?: UnawareClients;
  /**
   * A call of such a caller that carries a `progressToken` hears from the server at least this
   * often while it runs inline or waits for its task (default 10 000 ms), so hosts that reset
   * their timeout on progress keep it.
   */
  readonly keepAliveMs?: number;
}

/** How often a long call of a caller without tasks gets a progress notification at least. */
export const DEFAULT_KEEP_ALIVE_MS = 10_000;

export interface ProtocolServerOptions {
  readonly revision: ProtocolRevision;
  readonly transport: 'http' | 'stdio';
  /** 2025-11-25: declare `tasks.list` only when the session's caller is identified (docs/design/protocol-rules.md §4.1). */
  readonly listTasks: boolean;
  /** 2025-11-25: called with each task this session creates (and its call's progress token), to push its changes. */
  readonly onTaskCreated?: (taskId: string, caller: Caller, progressToken?: string | number) => void;
  /**
   * 2025-11-25: the session's ledger of questions out with its client. Every channel that asks
   * this session's questions (`tasks/result`, the standalone stream, companion waits) claims
   * each question in it first, so the client is asked each question once.
   */
  readonly questionLedger?: QuestionLedger;
  /**
   * Where the session's (2025-11-25) or the request's (2026-07-28) caller comes from, when the
   * HTTP front knows it: a caller without a principal holds its blocking waits against the
   * budget of its address, not against every anonymous caller's.
   */
  readonly clientAddress?: string;
}

/**
 * What a request handler reads of its request. On the SDK's path it is the SDK's `ServerContext`
 * (built per request by its protocol layer); on the kept 2026-07-28 path (modern-request-path.ts)
 * the front builds one per request itself. Either way every field is the request's own: nothing
 * a handler reads about its caller is held on the server object between requests.
 */
export interface RequestContext {
  readonly sessionId?: string;
  readonly http?: ServerContext['http'];
  /**
   * The request's client address, when the kept 2026-07-28 path serves it: a server built for one
   * request (or one session) takes it from `ProtocolServerOptions.clientAddress` instead.
   */
  readonly clientAddress?: string;
  readonly mcpReq: Pick<
    ServerContext['mcpReq'],
    'id' | 'method' | '_meta' | 'envelope' | 'inputResponses' | 'requestState' | 'signal' | 'notify' | 'log' | 'send'
  >;
}

/** A request handler as registered on the SDK `Server`: `(params or request, ctx) → result`. */
export type RequestHandler = (input: unknown, ctx: RequestContext) => Promise<Result>;

/**
 * Workaround 1: `Server` re-validates every `tools/call` result as a plain `CallToolResult`,
 * which rejects 2025's `{ task }` and adds `content: []` to 2026's task results. Skipping the wrap
 * for `tools/call` only keeps the SDK's checks everywhere else. (`fallbackRequestHandler`
 * would also work but turns every unknown method into an in-band -32601 instead of the
 * SDK's HTTP 404.) Arguments are validated by the tool registry instead.
 */
class TaskProtocolServer extends Server {
  constructor(...args: ConstructorParameters<typeof Server>) {
    super(...args);
    // Ids of requests to the client (elicitations) count up from 0 in the SDK, so anyone who
    // can post to the session could answer them. Each read draws a fresh random id instead.
    Object.defineProperty(this, '_requestMessageId', {
      get: unguessableRequestId,
      set: () => {},
      configurable: true,
    });
  }

  /**
   * Tasks exist in protocol 2025-11-25 and later: an older session (2025-06-18, ...) is not
   * offered them (docs/traceability.md, D rows). The SDK asks for the capabilities after negotiating.
   */
  override getCapabilities(): ServerCapabilities {
    const capabilities = super.getCapabilities();
    const version = this._negotiatedProtocolVersion;
    if (version === undefined || version >= FIRST_TASKS_VERSION || !capabilities.tasks) return capabilities;
    const { tasks: _withoutTasks, ...rest } = capabilities;
    return rest;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    return method === 'tools/call' ? invalidParamsOnSchemaError(method, handler) : super._wrapHandler(method, handler);
  }
}

/**
 * The SDK checks a spec method's params against its schema before the handler runs, and reports a
 * mismatch as a plain error, which becomes -32603 with zod's issue list as the message. For
 * `tools/call` (a missing or non-string `name`) that is the caller's mistake: -32602, naming the
 * field, as the schema-registered methods answer. Only the SDK's check throws a plain error here:
 * `handle` turns everything the framework's own code throws into a `ProtocolError`.
 */
function invalidParamsOnSchemaError(
  method: string,
  handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
  return async (request, ctx) => {
    try {
      return await handler(request, ctx);
    } catch (error) {
      if (error instanceof ProtocolError || !(error instanceof Error)) throw error;
      throw new ProtocolError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params for ${method}: ${schemaIssues(error.message)}`,
      );
    }
  };
}

/** zod's issue list (a JSON array in the message) as `field: message; ...`, paths relative to `params`. */
function schemaIssues(message: string): string {
  try {
    const issues = JSON.parse(message) as { path?: unknown[]; message?: string }[];
    if (!Array.isArray(issues)) return message;
    return issues
      .map((issue) => {
        const path = (issue.path ?? []).filter((part, i) => !(i === 0 && part === 'params')).join('.');
        return path ? `${path}: ${issue.message}` : String(issue.message);
      })
      .join('; ');
  } catch {
    return message;
  }
}

/** 48 random bits, as a number: the SDK increments the field, which must stay numeric. */
function unguessableRequestId(): number {
  return randomBytes(6).readUIntBE(0, 6);
}

const TaskIdParams = { params: z.looseObject({ taskId: z.string() }) };

/** The first protocol revision with tasks (as dated strings, revisions compare in order). */
const FIRST_TASKS_VERSION = '2025-11-25';

const CursorParams = { params: z.looseObject({ cursor: z.string().optional() }).optional() };

/** The SDK `Server` for one serving unit (see the module comment). */
export function createProtocolServer(deps: ProtocolServerDeps, options: ProtocolServerOptions): Server {
  return buildProtocolServer(deps, options).server;
}

/**
 * The 2026-07-28 handlers of one `Server` built once per process, for the kept request path
 * (modern-request-path.ts): the same functions the SDK's per-request servers run, keyed by
 * method. They hold nothing of any request: every caller-specific value (principal, auth,
 * headers, client address, abort signal, `_meta`, declared capabilities) comes from the
 * `RequestContext` each call is given.
 */
export interface KeptModernHandlers {
  /** `serverInfo` as the SDK stamps it into every 2026-07-28 result's `_meta`. */
  readonly serverInfo: ProtocolServerDeps['serverInfo'];
  /** The handler for `method`, if the 2026-07-28 leg has one. */
  handler(method: string): RequestHandler | undefined;
}

/** Builds the 2026-07-28 handlers once (see `KeptModernHandlers`). */
export function createKeptModernHandlers(deps: ProtocolServerDeps): KeptModernHandlers {
  // No unit: no client address of its own, which each request then brings in its context.
  const { modern } = buildProtocolServer(deps, { revision: '2026-07-28', transport: 'http', listTasks: false });
  const serverInfo = { ...deps.serverInfo };
  return { serverInfo, handler: (method) => modern.get(method) };
}

function buildProtocolServer(
  deps: ProtocolServerDeps,
  options: ProtocolServerOptions,
): { server: Server; modern: Map<string, RequestHandler> } {
  /** The 2026-07-28 handlers by method (empty for 2025-11-25). */
  const modern = new Map<string, RequestHandler>();
  // Workaround 5: capabilities per revision. A 2025 `initialize` must not show `extensions`, and a
  // 2026 `server/discover` must not show `tasks` (the SDK strips the latter, not the former).
  // `logging`: an inline call's `ctx.log` lines reach a client that asked for them (see logForwarder).
  const capabilities = {
    ...(options.revision === '2025-11-25'
      ? serverCapabilities2025({ list: options.listTasks })
      : serverCapabilities2026()),
    logging: {},
  };
  const codec = deps.requestStateCodec;
  const server = new TaskProtocolServer(
    { ...deps.serverInfo },
    {
      capabilities,
      ...(deps.instructions !== undefined && { instructions: deps.instructions }),
      // A retried 2026 call's requestState is checked against the server key before any handler
      // sees it; a forged or expired one is answered -32602 by the SDK.
      ...(options.revision === '2026-07-28' && codec && { requestState: { verify: codec.verify } }),
    },
  );

  // The client address is the request's own on the kept 2026-07-28 path (`ctx.clientAddress`),
  // the unit's on a server built for one request or session (`options.clientAddress`).
  const addressOf = (ctx: RequestContext): string | undefined => ctx.clientAddress ?? options.clientAddress;
  /** Whom a caller's blocking waits count against: its principal, else its address (see `identityKey`). */
  const holder = (caller: Caller, ctx: RequestContext): CallerIdentity => {
    const clientAddress = addressOf(ctx);
    return { principal: caller.principal, ...(clientAddress !== undefined && { clientAddress }) };
  };
  const unaware = deps.unaware;
  const readTools = unaware?.companionNames();
  // A caller without a principal counts its live tasks against its address's budget, stored as
  // a digest: the record keeps no client address. The unit's digest is taken once.
  const unitBudget = options.clientAddress === undefined ? undefined : liveBudgetOf(options.clientAddress);
  const liveBudgetFor = (ctx: RequestContext): string | undefined =>
    ctx.clientAddress === undefined ? unitBudget : liveBudgetOf(ctx.clientAddress);
  const caller = async (ctx: RequestContext): Promise<Caller> => {
    const authInfo = ctx.http?.authInfo;
    const headers = ctx.http?.req?.headers;
    const principal = await resolvePrincipal(deps.resolvePrincipal, {
      transport: options.transport,
      ...(authInfo && { authInfo }),
      ...(headers && { headers }),
    });
    const liveBudget = principal === null ? liveBudgetFor(ctx) : undefined;
    return { principal, ...(liveBudget !== undefined && { liveBudget }) };
  };
  // 2025-11-25 clients declare their capabilities once for the session; 2026-07-28 clients on each request.
  const declaredCapabilities = (ctx: RequestContext): unknown =>
    options.revision === '2025-11-25'
      ? server.getClientCapabilities()
      : (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  // The HTTP front door's idempotency header; the adapters prefer the call's own `_meta` key.
  const idempotencyHeader = (ctx: RequestContext): string | undefined =>
    ctx.http?.req?.headers?.get('idempotency-key') ?? undefined;
  const callContext = async (ctx: RequestContext): Promise<CallContext> => ({
    caller: await caller(ctx),
    ...withDefined('idempotencyKeyHeader', idempotencyHeader(ctx)),
    signal: ctx.mcpReq.signal,
    onProgress: progressForwarder(ctx),
    onLog: logForwarder(ctx),
    clientCapabilities: declaredCapabilities(ctx),
  });
  const modernContext = async (ctx: RequestContext): Promise<Tasks2026CallContext> => ({
    ...(await callContext(ctx)),
    tasksExtension: declaresTasksExtension(declaredCapabilities(ctx)),
    ...(ctx.mcpReq.inputResponses && { inputResponses: ctx.mcpReq.inputResponses }),
    ...(codec && {
      requestState: await verifiedRequestState(codec, ctx),
      inlineState: { seal: (state: InlineState) => codec.mint(state) },
    }),
  });
  // 2025-11-25: an inline call asks on its own response stream, if the client can answer forms.
  const legacyCallContext = async (ctx: RequestContext): Promise<CallContext> => {
    const base = await callContext(ctx);
    if (!acceptsFormElicitation(server.getClientCapabilities())) return base;
    return {
      ...base,
      ask: async (_key, pending) =>
        (await ctx.mcpReq.send(
          { method: 'elicitation/create', params: { ...pending.params } },
          { timeout: INLINE_QUESTION_TIMEOUT_MS },
        )) as InputAnswer,
    };
  };
  const elicitOnStream =
    (ctx: RequestContext): Elicit =>
    (params, timeoutMs, signal) =>
      ctx.mcpReq.send({ method: 'elicitation/create', params }, { timeout: timeoutMs, ...(signal && { signal }) });
  // Handlers answer with plain JSON built by the adapters; the wire tests check the shapes.
  // (Typed as `never` because the SDK's per-method result types do not know task results.)
  // Each request is one span (a task's trace starts at its creating tools/call), and counted.
  const handle = <P>(run: (params: P, ctx: RequestContext) => Promise<unknown>): never =>
    (async (params: P, ctx: RequestContext): Promise<Result> => {
      const method = ctx.mcpReq.method;
      const tool = method === 'tools/call' ? (params as { params?: { name?: unknown } })?.params?.name : undefined;
      return inSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'rpc.system': 'jsonrpc',
            'rpc.method': method,
            ...(typeof tool === 'string' && { 'mcp.tool.name': tool }),
          },
        },
        async () => {
          try {
            // Over HTTP the front has counted the request already (and answers 429 itself).
            const kind = options.transport === 'stdio' ? rateKindOf(method, tool, readTools) : undefined;
            if (kind && deps.rateLimits) {
              const limited = await deps.rateLimits.consume(await caller(ctx), kind);
              if (limited) throw limited;
            }
            const result = (await run(params, ctx)) as Result;
            deps.onRequest?.(method, 'ok');
            return result;
          } catch (error) {
            const protocolError = asProtocolError(error, deps.logger, method);
            deps.onRequest?.(method, protocolError.code);
            throw protocolError;
          }
        },
      );
    }) as never;

  /**
   * A `tools/call` of a caller that cannot receive a task: a companion tool, a handle, or (in
   * `inline` mode, or for a tool that refuses such callers) what `today` answers. Either way
   * the call hears a progress notification at least every `keepAliveMs` when it asked for
   * progress, and an inline run stops when its client hangs up; a task goes on.
   */
  const serveUnaware = async (
    clients: UnawareClients,
    params: Params,
    ctx: RequestContext,
    context: Omit<UnawareCallContext, 'signal' | 'onProgress' | 'waitSignal'>,
    today: (context: CallContext) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> => {
    const progress = keepAliveProgress(ctx, deps.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS);
    const signal = waitSignal(ctx);
    const slots = deps.blockingSlots;
    const full: UnawareCallContext = {
      ...context,
      signal,
      waitSignal: signal,
      // With the ledger unreachable the caller gets its handle at once, as with every slot taken.
      ...(slots && { holdGraceWait: () => slots.tryAcquire(holder(context.caller, ctx)).catch(() => undefined) }),
      ...(progress.onProgress && { onProgress: progress.onProgress }),
    };
    try {
      const name = params?.name;
      // A `task_wait` holds the request open like a blocking `tasks/result`: counted the same.
      const blocking = typeof name === 'string' && name === clients.waitToolName;
      const run = async () => (await clients.callTool(params, full)) ?? (await today(full));
      if (!blocking) return await run();
      return await whileBlocking(deps, holder(context.caller, ctx), async () => {
        const registration = deps.waiters.enter(ctx.sessionId ?? '(no session)', 'result');
        try {
          return await run();
        } finally {
          registration.leave();
        }
      });
    } finally {
      progress.stop();
    }
  };

  if (options.revision === '2025-11-25') {
    const tasks2025 = deps.tasks2025;
    // 2025-11-25: a session whose client declared no `tasks` capability cannot receive a task.
    const unawareSession = (): UnawareClients | undefined =>
      unaware && server.getClientCapabilities()?.tasks === undefined ? unaware : undefined;
    // The SEP-1686 shim lives on 2025-11-25 connections only, and only when the app enabled it.
    const sep1686 = deps.sep1686;
    server.setRequestHandler(
      'tools/list',
      handle(async () => {
        const listing = tasks2025.listTools();
        return unawareSession()?.listTools(listing) ?? listing;
      }),
    );
    server.setRequestHandler(
      'tools/call',
      handle(async (request: { params?: Params }, ctx) => {
        const sep1686Request = sep1686 && readSep1686TaskRequest(request.params);
        if (sep1686 && sep1686Request) {
          const context = await legacyCallContext(ctx);
          const hangup = ctx.http?.req?.signal;
          return whileBlocking(deps, holder(context.caller, ctx), async () => {
            // A blocking wait like tasks/result: counted, and over when its request is gone.
            const registration = deps.waiters.enter(ctx.sessionId ?? '(no session)', 'result');
            try {
              return await sep1686.callTool(request.params, sep1686Request, {
                ...context,
                ...(hangup && { hangup }),
                announce: (notification) => ctx.mcpReq.notify(notification as never),
                ...(acceptsFormElicitation(server.getClientCapabilities()) && { elicit: elicitOnStream(ctx) }),
              });
            } finally {
              registration.leave();
            }
          });
        }
        const context = await legacyCallContext(ctx);
        const clients = unawareSession();
        const task = request.params?.task;
        // A call that asks for a task is served as one, whatever the client declared.
        if (clients && (task === undefined || task === null)) {
          const elicit = acceptsFormElicitation(server.getClientCapabilities()) ? elicitOnStream(ctx) : undefined;
          return serveUnaware(
            clients,
            request.params,
            ctx,
            {
              caller: context.caller,
              clientCapabilities: context.clientCapabilities,
              questions: elicit
                ? { kind: 'elicit', elicit, ...(options.questionLedger && { ledger: options.questionLedger }) }
                : { kind: 'none' },
            },
            (inline) => tasks2025.callTool(request.params, { ...context, ...inline }),
          );
        }
        const result = await tasks2025.callTool(request.params, context);
        const created = (result as { task?: { taskId?: string } }).task;
        if (created?.taskId) options.onTaskCreated?.(created.taskId, context.caller, ctx.mcpReq._meta?.progressToken);
        return result;
      }),
    );
    // A task answers in the dialect that created it; without the SEP-1686 shim that is always 2025-11-25.
    // A client-chosen id names a task in the caller's own namespace (see `clientTaskKey`).
    const createdThroughA = async (params: Params, who: Caller) => {
      if (!sep1686) return false;
      requireTaskId(params);
      const record = await sep1686.find(params, who);
      return record !== undefined && isSep1686Task(record);
    };
    // Workaround 2: every tasks/* handler uses the three-argument schema form.
    server.setRequestHandler(
      'tasks/get',
      TaskIdParams,
      handle(async (params: Params, ctx) => {
        const who = await caller(ctx);
        return sep1686 && (await createdThroughA(params, who))
          ? sep1686.getTask(params, who)
          : tasks2025.getTask(params, who);
      }),
    );
    server.setRequestHandler(
      'tasks/result',
      TaskIdParams,
      handle(async (params: Params, ctx) => {
        const who = await caller(ctx);
        if (sep1686 && (await createdThroughA(params, who))) return sep1686.getTaskResult(params, who);
        return whileBlocking(deps, holder(who, ctx), async () => {
          const registration = deps.waiters.enter(ctx.sessionId ?? '(no session)', 'result');
          try {
            return await tasks2025.getTaskResult(
              params,
              who,
              waitSignal(ctx),
              acceptsFormElicitation(server.getClientCapabilities()) ? elicitOnStream(ctx) : undefined,
              options.questionLedger,
            );
          } finally {
            registration.leave();
          }
        });
      }),
    );
    if (sep1686) {
      server.setRequestHandler(
        'tasks/delete',
        TaskIdParams,
        handle(async (params: Params, ctx) => sep1686.deleteTask(params, await caller(ctx))),
      );
    }
    server.setRequestHandler(
      'tasks/cancel',
      TaskIdParams,
      handle(async (params: Params, ctx) => {
        const who = await caller(ctx);
        if (!(sep1686 && (await createdThroughA(params, who)))) return tasks2025.cancelTask(params, who);
        const clientTaskId = requireTaskId(params);
        const cancelled = await tasks2025.cancelTask({ ...params, taskId: clientTaskKey(who, clientTaskId) }, who);
        return { ...cancelled, taskId: clientTaskId };
      }),
    );
    if (options.listTasks) {
      server.setRequestHandler(
        'tasks/list',
        CursorParams,
        handle(async (params: Params, ctx) =>
          sep1686
            ? listEachInItsDialect(deps, params, await caller(ctx))
            : tasks2025.listTasks(params, await caller(ctx)),
        ),
      );
    }
  } else {
    const tasks2026 = deps.tasks2026;
    // 2026-07-28: a request whose client capabilities lack the tasks extension cannot receive a task.
    const declared = (ctx: RequestContext): Record<string, unknown> => {
      const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
      return isPlainObject(capabilities) ? capabilities : {};
    };
    /** Registers a 2026 handler on the SDK `Server` and keeps it for the kept request path. */
    const serve = (method: string, params: typeof TaskIdParams | undefined, handler: never): void => {
      if (params) server.setRequestHandler(method, params, handler);
      else server.setRequestHandler(method as 'tools/list', handler);
      modern.set(method, handler as RequestHandler);
    };
    serve(
      'tools/list',
      undefined,
      handle(async (_params: unknown, ctx) => {
        const listing = tasks2026.listTools();
        return unaware && !declaresTasksExtension(declared(ctx)) ? unaware.listTools(listing) : listing;
      }),
    );
    serve(
      'tools/call',
      undefined,
      handle(async (request: { params?: Params }, ctx) => {
        const context = await modernContext(ctx);
        if (!unaware || context.tasksExtension) return tasks2026.callTool(request.params, context);
        return serveUnaware(
          unaware,
          request.params,
          ctx,
          {
            caller: context.caller,
            // Questions travel as multi-round-trip results, to a client that can answer forms.
            questions: acceptsFormElicitation(declared(ctx) as ClientCapabilities)
              ? { kind: 'rounds' }
              : { kind: 'none' },
            clientCapabilities: context.clientCapabilities,
            ...(context.inputResponses && { inputResponses: context.inputResponses }),
            ...(context.requestState !== undefined && { requestState: context.requestState }),
            ...(codec && { sealState: (state: InlineState) => codec.mint(state) }),
          },
          (inline) => tasks2026.callTool(request.params, { ...context, ...inline }),
        );
      }),
    );
    // Workaround 2 again: schema registration is what lets 2026 tasks/get and tasks/cancel
    // through the SDK's era gate. tasks/result and tasks/list are deliberately not registered:
    // the SDK answers -32601 for them on 2026, as the 2026 tasks extension requires.
    serve(
      'tasks/get',
      TaskIdParams,
      handle(async (params: Params, ctx) => tasks2026.getTask(params, await modernContext(ctx))),
    );
    serve(
      'tasks/cancel',
      TaskIdParams,
      handle(async (params: Params, ctx) => tasks2026.cancelTask(params, await modernContext(ctx))),
    );
    serve(
      'tasks/update',
      TaskIdParams,
      handle(async (params: Params, ctx) =>
        // Workaround 3: the SDK lifts `inputResponses` off the params before handlers run.
        tasks2026.updateTask(params, await modernContext(ctx), ctx.mcpReq.inputResponses ?? params?.inputResponses),
      ),
    );
  }
  return { server, modern };
}

/** The live-task budget of callers without a principal from `clientAddress`: a digest of its budget (an IPv6 /64 is one). */
function liveBudgetOf(clientAddress: string): string {
  return createHash('sha256').update(addressBudget(clientAddress)).digest('base64url').slice(0, 22);
}

/** Runs a request that waits for a task's end while holding one of the caller's blocking slots. */
async function whileBlocking<T>(deps: ProtocolServerDeps, who: CallerIdentity, run: () => Promise<T>): Promise<T> {
  const slots = deps.blockingSlots;
  if (!slots) return run();
  const release = await slots.tryAcquire(who);
  if (!release) throw slots.refusal();
  try {
    return await run();
  } finally {
    release();
  }
}

/** `tasks/list` with the shim on: each task in the fields of the dialect that created it. */
async function listEachInItsDialect(
  deps: ProtocolServerDeps,
  params: Params,
  who: Caller,
): Promise<{ tasks: unknown[]; nextCursor?: string }> {
  const page = await asRpc(() => deps.engine.list(who, optionalCursor(params)));
  return {
    tasks: page.tasks.map((record) => (isSep1686Task(record) ? toSep1686Task(record) : toTask2025(record))),
    ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
  };
}

/**
 * The state a retried call carries, checked against the server key. The SDK runs its verify
 * hook only inside the result wrapper that `tools/call` skips (workaround 1), so it is checked
 * here; the value is the client's raw one, and only a string that verifies is accepted.
 */
async function verifiedRequestState(
  codec: RequestStateCodec<InlineState>,
  ctx: RequestContext,
): Promise<InlineState | undefined> {
  const raw = ctx.mcpReq.requestState<unknown>();
  if (raw === undefined) return undefined;
  try {
    // Only a sealed string is trusted. With the SDK's wrapper skipped nothing has decoded the
    // value, so anything else is the client's own object: refused as the SDK refuses it.
    if (typeof raw !== 'string') throw new Error('not a sealed string');
    // The codec binds no request context (task-server.ts builds it without one), so the narrow
    // context stands in for the SDK's.
    return await codec.verify(raw, ctx as ServerContext);
  } catch {
    throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid or expired requestState', {
      reason: 'invalid_request_state',
    });
  }
}

/**
 * What ends a blocking wait: the client cancelling the request, or the HTTP request that
 * carries it closing (a client that hung up). The SDK aborts `mcpReq.signal` only for the
 * former, so a dropped client's waiter would otherwise stay until its task ended.
 */
function waitSignal(ctx: RequestContext): AbortSignal {
  const hangup = ctx.http?.req?.signal;
  return hangup ? AbortSignal.any([ctx.mcpReq.signal, hangup]) : ctx.mcpReq.signal;
}

/** `ctx.log` levels as MCP logging levels. */
const MCP_LOG_LEVEL = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' } as const;

/**
 * Sends the `ctx.log` lines of an inline call as `notifications/message` on the call's own
 * stream, through the SDK, which applies the client's threshold: on 2025-11-25 the session's
 * `logging/setLevel`; on 2026-07-28 the request's `_meta` log level, and nothing at all for a
 * request that set none.
 */
function logForwarder(ctx: RequestContext): LogListener {
  return (level, message, data, tool) => {
    void ctx.mcpReq
      .log(MCP_LOG_LEVEL[level], data === undefined ? message : { message, ...data }, tool)
      .catch(() => {});
  };
}

/** Forwards `ctx.progress` of an inline call as `notifications/progress`, when the client asked. */
function progressForwarder(ctx: RequestContext): ((update: TaskProgress) => void) | undefined {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let count = 0;
  return (update) => {
    count++;
    void ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken,
          progress: update.progress ?? count,
          ...(update.total !== undefined && { total: update.total }),
          ...(update.message !== undefined && { message: update.message }),
        },
      })
      .catch(() => {});
  };
}

/**
 * Progress of a call of a caller without tasks: each update as `notifications/progress`, and
 * when nothing was sent for `intervalMs`, a keep-alive one, so a host that resets its request
 * timeout on progress keeps the call alive. Values only grow (the spec asks for it); a
 * keep-alive repeats the last value when a total is known rather than invent progress.
 */
function keepAliveProgress(
  ctx: RequestContext,
  intervalMs: number,
): { onProgress?: (update: TaskProgress) => void; stop(): void } {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return { stop() {} };
  let last = 0;
  let total: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const send = (progress: number, message?: string) => {
    last = progress;
    void ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken,
          progress,
          ...(total !== undefined && { total }),
          ...(message !== undefined && { message }),
        },
      })
      .catch(() => {});
    schedule();
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => send(total === undefined ? last + 1 : last, 'still working'), intervalMs);
    timer.unref?.();
  };
  schedule();
  return {
    onProgress: (update) => {
      if (update.total !== undefined) total = update.total;
      const grew = update.progress !== undefined && update.progress > last;
      send(grew ? (update.progress as number) : total === undefined ? last + 1 : last, update.message);
    },
    stop: () => clearTimeout(timer),
  };
}

function asProtocolError(error: unknown, logger: Logger, method: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const rpc = error instanceof JsonRpcError ? error : toJsonRpcError(error);
  if (!(error instanceof JsonRpcError) && rpc.code === JsonRpcErrorCode.InternalError) {
    logger.error(`${method} failed`, {
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
  return new ProtocolError(rpc.code, rpc.message, rpc.data);
}

/** `{ [name]: value }`, or nothing when the value is absent (for optional fields under exactOptionalPropertyTypes). */
function withDefined<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}
