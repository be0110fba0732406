/**
 * The routes an operator's tools call: `/healthz` (the process answers), `/readyz` (it can
 * serve: its runtime's store answers, its tools are loaded, it is not shutting down) and
 * `/metrics` (Prometheus, when enabled). Health routes are unauthenticated by design: container
 * orchestrators probe them without credentials, so they reveal nothing but a status and the
 * names of the checks. Why a check fails (an error that may name the Redis address) goes to the
 * log, and to a caller holding the metrics token.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../http/client-address.js';
import type { Logger } from '../observe/logger.js';
import type { TaskMetrics } from '../observe/metrics.js';
import { requestUrl } from './node-http.js';

/** What one readiness check found: `ok`, or why not. */
export type CheckResult = 'ok' | (string & {});

/** Named readiness checks; the process is ready when every one says `ok`. */
export type ReadinessChecks = () => Promise<Record<string, CheckResult>>;

export interface OperatorRoutesOptions {
  readonly readiness: ReadinessChecks;
  readonly metrics?: TaskMetrics;
  /**
   * When set, `/metrics` asks for `Authorization: Bearer <token>`, and a `/readyz` caller with
   * it sees why a check fails (others see only `ok` or `failing`).
   */
  readonly metricsToken?: string;
  /** Hears why a readiness check fails, once each time its reason changes, and when it recovers. */
  readonly logger?: Logger;
}

export type Route = (request: Request, url: URL) => Promise<Response | undefined>;

/** Longest a readiness check may take before it counts as failed (probes time out around 1 s). */
const CHECK_TIMEOUT_MS = 900;

export function operatorRoutes(options: OperatorRoutesOptions): Route {
  const logReadiness = readinessLog(options.logger);
  return async (request, url) => {
    if (url.pathname !== '/healthz' && url.pathname !== '/readyz' && url.pathname !== '/metrics') return undefined;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return Response.json({ error: 'method not allowed' }, { status: 405, headers: { allow: 'GET, HEAD' } });
    }
    if (url.pathname === '/healthz') return Response.json({ status: 'ok' }, { headers: NO_STORE });
    if (url.pathname === '/readyz') {
      const checks = await withinDeadline(options.readiness);
      logReadiness(checks);
      const ready = Object.values(checks).every((result) => result === 'ok');
      const detailed = options.metricsToken !== undefined && bearerMatches(request, options.metricsToken);
      return Response.json(
        { status: ready ? 'ready' : 'not ready', checks: detailed ? checks : withoutReasons(checks) },
        { status: ready ? 200 : 503, headers: NO_STORE },
      );
    }
    if (!options.metrics) {
      return Response.json(
        { error: 'metrics are off: set MCP_TASK_METRICS=1 or the `metrics` option' },
        { status: 404, headers: NO_STORE },
      );
    }
    if (options.metricsToken !== undefined && !bearerMatches(request, options.metricsToken)) {
      return Response.json(
        { error: 'metrics need the metrics bearer token' },
        { status: 401, headers: { 'www-authenticate': 'Bearer', ...NO_STORE } },
      );
    }
    const { body, contentType } = await options.metrics.render();
    return new Response(body, { headers: { 'content-type': contentType, ...NO_STORE } });
  };
}

const NO_STORE = { 'cache-control': 'no-store' };

/** Each check as `ok` or `failing`: what an unauthenticated prober may know. */
function withoutReasons(checks: Record<string, CheckResult>): Record<string, 'ok' | 'failing'> {
  return Object.fromEntries(Object.entries(checks).map(([name, result]) => [name, result === 'ok' ? 'ok' : 'failing']));
}

/**
 * Logs a check's reason when it starts failing or its reason changes, and its recovery: a probe
 * every few seconds must not write the same line every few seconds.
 */
function readinessLog(logger: Logger | undefined): (checks: Record<string, CheckResult>) => void {
  const failing = new Map<string, string>();
  return (checks) => {
    if (!logger) return;
    for (const [check, result] of Object.entries(checks)) {
      const before = failing.get(check);
      if (result === 'ok') {
        if (before !== undefined) logger.info('readiness check ok again', { check });
        failing.delete(check);
      } else if (before !== result) {
        logger.warn('readiness check failing', { check, reason: result });
        failing.set(check, result);
      }
    }
  };
}

async function withinDeadline(readiness: ReadinessChecks): Promise<Record<string, CheckResult>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Record<string, CheckResult>>((resolve) => {
    timer = setTimeout(() => resolve({ checks: `no answer within ${CHECK_TIMEOUT_MS} ms` }), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      readiness().catch((error: unknown) => ({ checks: error instanceof Error ? error.message : String(error) })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function bearerMatches(request: Request, token: string): boolean {
  const header = request.headers.get('authorization') ?? '';
  const match = /^Bearer (.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1] as string);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** How long one readiness check may take: under the whole route's deadline, so its name shows. */
const ONE_CHECK_TIMEOUT_MS = 750;

/** `ok`, or the reason `check` rejected or that it did not answer in time. */
export async function checkOf(check: () => Promise<unknown>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${ONE_CHECK_TIMEOUT_MS} ms`)),
          ONE_CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Warns when `/metrics` answers anyone who can reach `host`: served without a token on an
 * address other than loopback (a worker's health port listens on 0.0.0.0 by default, for
 * probes from outside its container). Metrics name the tools and count their use.
 */
export function warnIfMetricsOpen(
  logger: Logger,
  served: { readonly metrics: boolean; readonly token: boolean; readonly host: string },
): void {
  if (!served.metrics || served.token || isLoopbackHost(served.host)) return;
  logger.warn(
    `/metrics answers without a token on ${served.host}: set MCP_TASK_METRICS_TOKEN (or metrics: { token }), or bind to 127.0.0.1`,
    { host: served.host },
  );
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A small HTTP server with only the operator routes, for processes that serve no MCP (worker
 * processes, on `HEALTH_PORT`).
 */
export async function serveOperatorRoutes(
  route: Route,
  listen: { port: number; host?: string },
): Promise<HealthServer> {
  const server = http.createServer((req, res) => {
    // The path is the request line's alone, whatever the Host header says (see `requestUrl`).
    const url = requestUrl(req.url);
    if (!url) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request: the request target is not a URL\n');
      return;
    }
    const request = new Request(url, { method: req.method ?? 'GET', headers: toHeaders(req.headers) });
    void route(request, url)
      .then(async (response) => {
        const answer = response ?? Response.json({ error: 'not found' }, { status: 404 });
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(req.method === 'HEAD' ? undefined : Buffer.from(await answer.arrayBuffer()));
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}
