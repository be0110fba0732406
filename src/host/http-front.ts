/**
 * Streamable HTTP for both eras from one endpoint. 2026-07-28 requests go to the SDK's
 * per-request handler; 2025-11-25 traffic goes to a sessionful transport with one `Server`
 * per session (workaround 4: the SDK's stateless legacy default loses the client's answer to
 * an elicitation sent on a blocked `tasks/result`).
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
import type { Logger } from '../tools/logger.js';
import { type PrincipalResolver, resolvePrincipal } from './principal.js';
import type { Era } from './protocol-server.js';
import { fillMissingTaskName } from './task-name-header.js';
import { readTaskListen, serveTaskListen } from './task-subscriptions.js';
import type { WaiterRegistry } from './waiters.js';

export interface HttpAuthOptions {
  readonly verifier: OAuthTokenVerifier;
  /** Reject requests without a bearer token (default). `false` lets anonymous callers in. */
  readonly required?: boolean;
  readonly requiredScopes?: string[];
  readonly resourceMetadataUrl?: string;
}

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
}

export type SessionServerFactory = (unit: { era: Era; listTasks: boolean }) => Server;

interface LegacySession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
}

export class HttpFront {
  private readonly sessions = new Map<string, LegacySession>();
  private readonly modern;
  private readonly bearer;
  private readonly allowedHosts: string[];
  private readonly allowedOrigins: string[];
  private readonly sweeper: NodeJS.Timeout;
  private readonly sessionIdleMs: number;

  constructor(
    private readonly factory: SessionServerFactory,
    private readonly engine: TaskEngine,
    private readonly principals: PrincipalResolver,
    private readonly waiters: WaiterRegistry,
    logger: Logger,
    private readonly options: HttpFrontOptions = {},
  ) {
    this.modern = createMcpHandler(({ era }) => factory({ era, listTasks: false }), {
      legacy: 'reject',
      onerror: (error) => logger.debug('2026-07-28 request rejected', { error: error.message }),
    });
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

  async fetch(request: Request): Promise<Response> {
    return this.countStream(await this.serve(request));
  }

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

  /**
   * The checks every request to `/mcp` passes (Host, Origin, bearer token), for other routes
   * that must sit behind the same door (the dashboard): the caller, or the refusal to answer.
   */
  async admit(request: Request): Promise<{ caller: Caller } | Response> {
    const admitted = await this.check(request);
    if (admitted instanceof Response) return admitted;
    const principal = await resolvePrincipal(this.principals, {
      transport: 'http',
      headers: request.headers,
      ...(admitted.authInfo && { authInfo: admitted.authInfo }),
    });
    return { caller: { principal } };
  }

  private async check(request: Request): Promise<{ authInfo?: AuthInfo } | Response> {
    const rejected =
      hostHeaderValidationResponse(request, this.allowedHosts) ??
      originValidationResponse(request, this.allowedOrigins);
    if (rejected) return rejected;
    if (this.bearer && (this.options.auth?.required !== false || request.headers.has('authorization'))) {
      const verdict = await this.bearer(request);
      if (verdict instanceof Response) return verdict;
      return { authInfo: verdict };
    }
    return {};
  }

  private async serve(request: Request): Promise<Response> {
    const admitted = await this.check(request);
    if (admitted instanceof Response) return admitted;
    const authInfo = admitted.authInfo;
    // Workaround 6: the SDK's listen router would drop `taskIds`; serve those streams here.
    const listen = await readTaskListen(request);
    if (listen)
      return serveTaskListen(request, listen, {
        engine: this.engine,
        principals: this.principals,
        waiters: this.waiters,
        ...(authInfo && { authInfo }),
      });
    if (await isLegacyRequest(request)) return this.legacy(request, authInfo);
    const modern = this.options.allowMissingMcpName ? await fillMissingTaskName(request) : request;
    return this.modern.fetch(modern, authInfo ? { authInfo } : undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.flatMap(({ transport, server }) => [transport.close(), server.close()]));
    await this.modern.close();
  }

  private async legacy(request: Request, authInfo: AuthInfo | undefined): Promise<Response> {
    const options = authInfo ? { authInfo } : undefined;
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      if (!session) {
        return Response.json(
          { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null },
          { status: 404 },
        );
      }
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, options);
    }
    // No session yet: this must be `initialize`. Whether the session may list tasks depends on
    // whether anything identifies its caller (2025-11-25 security rule for tasks.list).
    const principal = await resolvePrincipal(this.principals, {
      transport: 'http',
      headers: request.headers,
      ...(authInfo && { authInfo }),
    });
    const server = this.factory({ era: 'legacy', listTasks: principal !== null });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
        void server.close();
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request, options);
    if (transport.sessionId === undefined) {
      // Not an initialize after all: the transport has answered with its error; drop the pair.
      await Promise.allSettled([transport.close(), server.close()]);
    }
    return response;
  }

  private closeIdleSessions(): void {
    const cutoff = Date.now() - this.sessionIdleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen >= cutoff) continue;
      this.sessions.delete(id);
      void Promise.allSettled([session.transport.close(), session.server.close()]);
    }
  }
}
