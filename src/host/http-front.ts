/**
 * Streamable HTTP for both protocol revisions from one endpoint. Plain stateless 2026-07-28 calls
 * go to handlers kept for the process (modern-request-path.ts), other 2026-07-28 requests to the
 * SDK's per-request handler; 2025-11-25 traffic goes to a sessionful transport with one `Server`
 * per session (workaround 4: the SDK's stateless legacy default loses the client's answer to
 * an elicitation sent on a blocked `tasks/result`).
 *
 * Every request is admitted from its headers alone (host, origin, bearer token, principal)
 * before its body is read; the body is then read within its size and depth bounds, once, and
 * handed on parsed.
 */
import { randomUUID } from 'node:crypto';
import {
  type AuthInfo,
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type OAuthTokenVerifier,
  originValidationResponse,
  requireBearerAuth,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Caller, TaskEngine } from '../engine/engine.js';
import type { SlotLedger } from '../engine/slot-ledger.js';
import {
  type ClientAddressResolver,
  type ClientConnection,
  clientAddressResolver,
  type TrustProxy,
} from '../http/client-address.js';
import { type Answer, asResponse, JsonAnswer } from '../http/json-answer.js';
import { type BodyReading, bodyTooLarge, readJsonBody } from '../http/json-body.js';
import type { RateSubject } from '../http/rate-budget.js';
import { type JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observe/logger.js';
import { isPlainObject } from '../protocol/params.js';
import { toJsonRpcError } from '../protocol/rpc-error.js';
import { MemorySlotLedger } from '../runtime/memory/slot-ledger.js';
import { DEFAULT_LIMITS, type TaskServerLimits } from './limits.js';
import type { ModernRequestPath } from './modern-request-path.js';
import { type PrincipalResolver, resolvePrincipal } from './principal.js';
import { PrincipalSlots } from './principal-slots.js';
import { type ProtocolRevision, revisionOfEra } from './protocol-server.js';
import { type RateLimits, rateCostOf } from './rate-limits.js';
import { fillMissingTaskName } from './task-name-header.js';
import { readTaskListen, serveTaskListen } from './task-subscriptions.js';
import type { WaiterRegistry } from './waiters.js';

/**
 * Bearer authentication in front of `/mcp` (and the dashboard). The verifier checks each token;
 * the principal that owns tasks is then read from the verified `AuthInfo` (see
 * `defaultPrincipalResolver`). A missing or refused token is answered 401 with a
 * `WWW-Authenticate` header naming `resourceMetadataUrl`; a token without `requiredScopes`, 403.
 */
export interface HttpAuthOptions {
  readonly verifier: OAuthTokenVerifier;
  /** Reject requests without a bearer token (default). `false` lets anonymous callers in. */
  readonly required?: boolean;
  readonly requiredScopes?: string[];
  readonly resourceMetadataUrl?: string;
}

/**
 * How the Streamable HTTP front accepts requests: which Host and Origin names it trusts,
 * authentication, session idling, and which proxies may name the client. The defaults suit a
 * server bound to 127.0.0.1 with no auth.
 */
export interface HttpFrontOptions {
  /**
   * Host header names accepted (DNS-rebinding protection). Default: localhost names only,
   * which suits a server bound to 127.0.0.1; list your public names when you bind wider.
   */
  readonly allowedHosts?: readonly string[];
  /** Origin hostnames accepted from browsers. Default: localhost origins. */
  readonly allowedOrigins?: readonly string[];
  readonly auth?: HttpAuthOptions;
  /** Idle 2025-11-25 sessions are closed after this long (default 30 minutes). */
  readonly sessionIdleMs?: number;
  /**
   * Accept 2026-07-28 `tasks/get`, `tasks/update` and `tasks/cancel` without an `Mcp-Name`
   * header, reading the task id from the body (default false: the spec makes the header a client
   * MUST, and the conformance suite checks that a server refuses its absence). For clients that
   * omit it, such as FastMCP's. A header that does not match the body is refused either way.
   */
  readonly allowMissingMcpName?: boolean;
  /**
   * Reverse proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, or
   * `loopback`, `linklocal`, `uniquelocal`); a caller without a principal is counted by that
   * address (rate limits, sessions, listen streams). Default: none, the connection's own address counts. Name only your proxies:
   * any client can send the header.
   */
  readonly trustProxy?: TrustProxy;
}

/**
 * Builds the protocol server of a 2025-11-25 session or of one 2026-07-28 request.
 * `clientAddress`: where the session's (or request's) caller comes from, when the front knows
 * it: whom a caller without a principal is counted as for the caps it holds.
 */
export type SessionServerFactory = (unit: {
  revision: ProtocolRevision;
  listTasks: boolean;
  clientAddress?: string;
}) => Server;

/** Who a request comes from, decided from its headers before anything else is done for it. */
export interface Admission {
  readonly authInfo?: AuthInfo;
  readonly caller: Caller;
  /**
   * Aborts when the client hangs up before the response finished, from the Node server that
   * owns the connection. `Request.signal` is not enough for a wait that outlives its handler:
   * undici links a Request's signal to its source only through a WeakRef, so a hangup reaches
   * it only while something still holds that Request (an idle stream holds none of its own).
   */
  readonly hangup?: AbortSignal;
  /**
   * The address the request comes from (`X-Forwarded-For` only from a trusted proxy): whom a
   * caller without a principal is counted as. Unknown when the host passes no connection.
   */
  readonly clientAddress?: string;
}

interface LegacySession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  /** The principal that initialized the session: the only one that may use it. */
  readonly principal: string | null;
  readonly release: () => void;
  lastSeen: number;
}

export interface HttpFrontDeps {
  readonly engine: TaskEngine;
  readonly principals: PrincipalResolver;
  readonly logger: Logger;
  readonly limits?: TaskServerLimits;
  readonly rateLimits?: RateLimits;
  /** Counts the waits held open (listen streams among them), for the metrics. */
  readonly waiters: WaiterRegistry;
  /** Hears of each request refused over a rate limit or a quota the front applies itself. */
  readonly onRefused?: (reason: 'rate_limit' | 'quota') => void;
  /**
   * Where the caps on sessions and listen streams are counted (the runtime's ledger: across
   * processes on Redis). Default: this process's memory.
   */
  readonly slots?: SlotLedger;
  /** Hears of each session or listen slot counted in this process's memory because `slots` did not answer. */
  readonly onSlotCountedLocally?: (cap: string) => void;
  /** Caps on listen streams per principal, shared with nothing else. */
  readonly listenSlots?: PrincipalSlots;
  /**
   * Hears when a 2025-11-25 session's standalone GET stream opens (`true`) and closes
   * (`false`): what the server sends outside any request reaches the client only while it is open.
   */
  readonly onStandaloneStream?: (server: Server, open: boolean) => void;
  /** Tools whose calls count as task reads, not creations (the companion tools). */
  readonly readTools?: ReadonlySet<string>;
  /**
   * Serves the plain stateless 2026-07-28 calls on handlers kept for the process, without the
   * SDK's per-request `Server` and transport (see modern-request-path.ts). Without it every
   * 2026-07-28 request takes the SDK's path.
   */
  readonly modernPath?: ModernRequestPath;
}

export class HttpFront {
  private readonly sessions = new Map<string, LegacySession>();
  private readonly handler2026;
  private readonly bearer;
  private readonly allowedHosts: string[];
  private readonly allowedOrigins: string[];
  private readonly sweeper: NodeJS.Timeout;
  private readonly sessionIdleMs: number;
  private readonly limits: TaskServerLimits;
  private readonly sessionSlots: PrincipalSlots;
  private readonly listenSlots: PrincipalSlots;
  private readonly clientAddress: ClientAddressResolver;
  /** The client address of each 2026-07-28 request in flight, for the server built for it. */
  private readonly addressOf = new WeakMap<Request, string>();

  constructor(
    private readonly factory: SessionServerFactory,
    private readonly deps: HttpFrontDeps,
    private readonly options: HttpFrontOptions = {},
  ) {
    this.limits = deps.limits ?? DEFAULT_LIMITS;
    this.clientAddress = clientAddressResolver(options.trustProxy);
    this.handler2026 = createMcpHandler(
      ({ era, requestInfo }) => {
        const clientAddress = requestInfo && this.addressOf.get(requestInfo);
        return factory({
          revision: revisionOfEra(era),
          listTasks: false,
          ...(clientAddress !== undefined && { clientAddress }),
        });
      },
      {
        legacy: 'reject',
        maxRequestBodySize: this.limits.maxBodyBytes,
        onerror: (error) => deps.logger.debug('2026-07-28 request rejected', { error: error.message }),
      },
    );
    this.bearer = options.auth
      ? requireBearerAuth({
          verifier: options.auth.verifier,
          ...(options.auth.requiredScopes && { requiredScopes: options.auth.requiredScopes }),
          ...(options.auth.resourceMetadataUrl && { resourceMetadataUrl: options.auth.resourceMetadataUrl }),
        })
      : undefined;
    this.allowedHosts = [...(options.allowedHosts ?? localhostAllowedHostnames())];
    this.allowedOrigins = [...(options.allowedOrigins ?? localhostAllowedOrigins())];
    this.sessionIdleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
    const ledger = deps.slots ?? new MemorySlotLedger();
    const observe = {
      logger: deps.logger,
      ...(deps.onSlotCountedLocally && { onCountedLocally: deps.onSlotCountedLocally }),
    };
    this.sessionSlots = new PrincipalSlots({
      ledger,
      cap: 'sessions',
      limit: this.limits.maxSessionsPerPrincipal,
      limitName: 'maxSessionsPerPrincipal',
      what: 'open sessions',
      ...observe,
    });
    this.listenSlots =
      deps.listenSlots ??
      new PrincipalSlots({
        ledger,
        cap: 'listen',
        limit: this.limits.maxListenStreamsPerPrincipal,
        limitName: 'maxListenStreamsPerPrincipal',
        what: 'open listen streams',
        ...observe,
      });
    this.sweeper = setInterval(() => this.closeIdleSessions(), Math.min(60_000, this.sessionIdleMs));
    this.sweeper.unref();
  }

  /** Open 2025-11-25 sessions. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Event streams open right now (SSE responses not yet finished). */
  get streamCount(): number {
    return this.openStreams;
  }

  private openStreams = 0;

  /** An event stream is counted from its response until its body ends or the client leaves. */
  private countStream(response: Response): Response {
    if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
    this.openStreams++;
    let open = true;
    const done = () => {
      if (open) this.openStreams--;
      open = false;
    };
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done: finished, value } = await reader.read();
          if (finished) {
            done();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          done();
          controller.error(error);
        }
      },
      cancel(reason) {
        done();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /** Serves one web-standard request: admission from the headers, then the request itself. */
  async fetch(request: Request, connection?: ClientConnection): Promise<Response> {
    const admission = await this.admit(request, connection);
    return admission instanceof Response ? admission : this.serve(request, admission);
  }

  /**
   * Decides from the headers alone whether the request may go on: host and origin, the bearer
   * token, and a principal for it. A verified token that names nobody is refused: a client id
   * is not a user, and every user of that client would share one principal.
   */
  async admit(request: Request, connection?: ClientConnection): Promise<Admission | Response> {
    const rejected =
      hostHeaderValidationResponse(request, this.allowedHosts) ??
      originValidationResponse(request, this.allowedOrigins);
    if (rejected) return rejected;
    const declared = Number(request.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > this.limits.maxBodyBytes) return bodyTooLarge(this.limits.maxBodyBytes);
    let authInfo: AuthInfo | undefined;
    if (this.bearer && (this.options.auth?.required !== false || request.headers.has('authorization'))) {
      const verdict = await this.bearer(request);
      if (verdict instanceof Response) return withConnectionClose(verdict);
      authInfo = verdict;
    }
    const principal = await resolvePrincipal(this.deps.principals, {
      transport: 'http',
      headers: request.headers,
      ...(authInfo && { authInfo }),
    });
    if (authInfo && principal === null) {
      const message = 'The access token names no subject (sub), and nothing else identifies its user';
      return new Response(JSON.stringify({ error: 'invalid_token', error_description: message }), {
        status: 401,
        headers: {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="invalid_token", error_description="${message}"`,
          connection: 'close',
        },
      });
    }
    const clientAddress = this.clientAddress(request.headers, connection);
    return {
      ...(authInfo && { authInfo }),
      caller: { principal },
      ...(clientAddress !== undefined && { clientAddress }),
    };
  }

  /** Serves an admitted request (its event streams counted while they are open). */
  async serve(request: Request, admission: Admission, body?: BodyReading): Promise<Response> {
    return asResponse(await this.answer(request, admission, body));
  }

  /**
   * `serve` for a host that writes a JSON answer to its socket itself (node:http): the kept
   * 2026-07-28 path's answers stay `JsonAnswer`s, never built into a web `Response`.
   */
  async answer(request: Request, admission: Admission, body?: BodyReading): Promise<Answer> {
    const answer = await this.route(request, admission, body);
    return answer instanceof JsonAnswer ? answer : this.countStream(answer);
  }

  /**
   * Reads the body within bounds (unless the caller read it already, from the socket, within the
   * same bounds), applies rate limits, and hands the request to its revision.
   */
  private async route(request: Request, admission: Admission, body?: BodyReading): Promise<Answer> {
    let parsedBody: unknown;
    if (request.method.toUpperCase() === 'POST') {
      const reading = body ?? (await readJsonBody(request, this.limits));
      if (!reading.ok) return reading.response;
      parsedBody = reading.body;
      const limited = await this.rateLimit(parsedBody, subjectOf(admission));
      if (limited) return limited;
    }
    const authOptions = admission.authInfo ? { authInfo: admission.authInfo } : {};
    // Workaround 6: the SDK's listen router would drop `taskIds`; serve those streams here.
    const listen = readTaskListen(request, parsedBody);
    if (listen) {
      const streaming = await serveTaskListen(request, listen, {
        engine: this.deps.engine,
        caller: admission.caller,
        ...(admission.clientAddress !== undefined && { clientAddress: admission.clientAddress }),
        waiters: this.deps.waiters,
        ...(admission.hangup && { hangup: admission.hangup }),
        slots: this.listenSlots,
        maxTaskIds: this.limits.maxTaskIdsPerListen,
      });
      if (streaming.status === 429) this.deps.onRefused?.('quota');
      return streaming;
    }
    const request2026 = this.options.allowMissingMcpName ? fillMissingTaskName(request, parsedBody) : request;
    // A plain stateless 2026-07-28 call is served on the kept handlers; anything else, by the SDK.
    const kept = this.deps.modernPath?.serve(request2026, parsedBody, admission);
    if (kept) return kept;
    if (await isLegacyRequest(request, parsedBody)) return this.serve2025(request, admission, parsedBody);
    if (admission.clientAddress !== undefined) this.addressOf.set(request2026, admission.clientAddress);
    return this.handler2026.fetch(request2026, { ...authOptions, ...(parsedBody !== undefined && { parsedBody }) });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const session of sessions) session.release();
    await Promise.allSettled(sessions.flatMap(({ transport, server }) => [transport.close(), server.close()]));
    await this.handler2026.close();
  }

  /** Each request of a batch counts; the first one over the budget refuses the whole POST. */
  private async rateLimit(body: unknown, subject: RateSubject): Promise<Response | undefined> {
    const rateLimits = this.deps.rateLimits;
    if (!rateLimits) return undefined;
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isPlainObject(message)) continue;
      const cost = rateCostOf(message, this.deps.readTools);
      if (!cost) continue;
      const limited = await rateLimits.consume(subject, cost.kind, cost.points);
      if (limited) {
        this.deps.onRefused?.('rate_limit');
        return limited.toResponse(message.id);
      }
    }
    return undefined;
  }

  private async serve2025(request: Request, admission: Admission, parsedBody: unknown): Promise<Response> {
    const options = {
      ...(admission.authInfo && { authInfo: admission.authInfo }),
      ...(parsedBody !== undefined && { parsedBody }),
    };
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      // Another principal (or an anonymous caller) holding the id learns nothing: same as unknown.
      if (!session || session.principal !== admission.caller.principal) return sessionNotFound();
      session.lastSeen = Date.now();
      const response = await session.transport.handleRequest(request, options);
      return request.method.toUpperCase() === 'GET' ? this.watchStandaloneStream(session.server, response) : response;
    }
    // No session yet: this must be `initialize`. Whether the session may list tasks depends on
    // whether anything identifies its caller (2025-11-25 security rule for tasks.list).
    let release: (() => void) | undefined;
    try {
      release = await this.sessionSlots.tryAcquire(subjectOf(admission));
    } catch (error) {
      return errorResponse(toJsonRpcError(error), parsedBody, 503);
    }
    if (!release) {
      this.deps.onRefused?.('quota');
      return errorResponse(this.sessionSlots.refusal(), parsedBody, 429);
    }
    const server = this.factory({
      revision: '2025-11-25',
      listTasks: admission.caller.principal !== null,
      ...(admission.clientAddress !== undefined && { clientAddress: admission.clientAddress }),
    });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.sessions.set(id, {
          transport,
          server,
          principal: admission.caller.principal,
          release,
          lastSeen: Date.now(),
        });
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
        release();
        void server.close();
      },
    });
    let response: Response;
    try {
      await server.connect(transport);
      response = await transport.handleRequest(request, options);
    } catch (error) {
      // No session came of it: its slot would otherwise stay taken (and renewed) for as long as
      // this process lives. A session that did start keeps its slot until it closes or expires.
      if (transport.sessionId === undefined) {
        release();
        await Promise.allSettled([transport.close(), server.close()]);
      }
      throw error;
    }
    if (transport.sessionId === undefined) {
      // Not an initialize after all: the transport has answered with its error; drop the pair.
      release();
      await Promise.allSettled([transport.close(), server.close()]);
    }
    return response;
  }

  /**
   * A session's GET answered with an event stream is its standalone stream (the SDK refuses a
   * second one with 409, and without an event store there is no replay stream): the session's
   * server hears when it opens, and when its body ends or the client leaves.
   */
  private watchStandaloneStream(server: Server, response: Response): Response {
    const listener = this.deps.onStandaloneStream;
    if (!listener || !response.ok || !response.body) return response;
    if (!response.headers.get('content-type')?.includes('text/event-stream')) return response;
    let open = true;
    const closed = () => {
      if (open) listener(server, false);
      open = false;
    };
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            closed();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          closed();
          controller.error(error);
        }
      },
      cancel(reason) {
        closed();
        return reader.cancel(reason);
      },
    });
    listener(server, true);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private closeIdleSessions(): void {
    const cutoff = Date.now() - this.sessionIdleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen >= cutoff) continue;
      this.sessions.delete(id);
      session.release();
      void Promise.allSettled([session.transport.close(), session.server.close()]);
    }
  }
}

/** Whom an admitted request's rate budget belongs to. */
export function subjectOf(admission: Admission): RateSubject {
  return {
    principal: admission.caller.principal,
    ...(admission.clientAddress !== undefined && { clientAddress: admission.clientAddress }),
  };
}

function sessionNotFound(): Response {
  return Response.json(
    { jsonrpc: '2.0', error: { code: JsonRpcErrorCode.SessionNotFound, message: 'Session not found' }, id: null },
    { status: 404 },
  );
}

function errorResponse(error: JsonRpcError, body: unknown, status: number): Response {
  const id = isPlainObject(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
  return Response.json({ jsonrpc: '2.0', id, error: error.toJSON() }, { status });
}

/** A refused request's body is never read: close the connection rather than drain it. */
function withConnectionClose(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.set('connection', 'close');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
