/**
 * `POST <publicUrl>/callbacks/<token>`: where outside systems deliver the payload a task's
 * `ctx.callback` hook waits for. The route is unauthenticated by design: the token (192 random
 * bits, bound to one task and one hook, single-use) is the capability, as a task id is without
 * auth. It is also exempt from the Host/Origin checks of `/mcp`: those protect a local server from
 * browsers, and callbacks come from other machines under the public name.
 *
 * Every POST is bounded (`maxCallbackBodyBytes`), rate-limited per client address and per token
 * (in Redis on BullMQ, so every server process shares the counters), and audit-logged (task,
 * hook name, source address, status; never the payload).
 */
import {
  BurstyRateLimiter,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { callbackTokenHash, looksLikeCallbackToken } from '../engine/callbacks.js';
import type { CallbackCheck, CallbackDelivery, TaskEngine } from '../engine/engine.js';
import type { TaskObserver } from '../engine/lifecycle.js';
import {
  addressBudget,
  type ClientAddressResolver,
  type ClientConnection,
  isLoopbackHost,
  type TrustProxy,
} from '../http/client-address.js';
import { parseJsonBody, readText } from '../http/json-body.js';
import type { Logger } from '../observe/logger.js';
import type { RedisClient } from '../runtime/bullmq/index.js';
import type { TaskServerLimits } from './limits.js';

/** The path segment callback URLs live under: `<publicUrl>/callbacks/<token>`. */
export const CALLBACK_PATH = '/callbacks/';

export interface CallbackRouteDeps {
  readonly engine: TaskEngine;
  /** Checks a payload against the hook's generated schema (`ToolRegistry.checkCallbackPayload`). */
  readonly check: (tool: string, name: string, payload: unknown) => CallbackCheck;
  readonly limits: Pick<
    TaskServerLimits,
    'maxCallbackBodyBytes' | 'maxJsonDepth' | 'callbackPostsPerSecond' | 'callbackPostsPerTokenPerMinute'
  >;
  readonly clientAddress: ClientAddressResolver;
  /** Hears the audit fact of each POST that named a live hook. */
  readonly observer: TaskObserver;
  readonly logger: Logger;
  /** Where the rate counters live; in this process's memory without it. */
  readonly store?: { readonly redis: RedisClient; readonly prefix: string };
  /** Hears each POST refused over a rate limit. */
  readonly onRefused?: (reason: 'rate_limit') => void;
}

/** Serves the callback route; `undefined` for any other path. */
export type CallbackRoute = (
  request: Request,
  url: URL,
  connection: ClientConnection | undefined,
) => Promise<Response | undefined>;

/** The token in a callback path (`…/callbacks/<token>`, under any base path), or `undefined`. */
export function callbackTokenOf(pathname: string): string | undefined {
  const at = pathname.lastIndexOf(CALLBACK_PATH);
  if (at < 0) return undefined;
  const token = pathname.slice(at + CALLBACK_PATH.length);
  return token !== '' && !token.includes('/') ? token : undefined;
}

export function callbackRoute(deps: CallbackRouteDeps): CallbackRoute {
  const { limits } = deps;
  const make = (label: string, points: number, duration: number): RateLimiterAbstract =>
    deps.store
      ? new RateLimiterRedis({
          storeClient: deps.store.redis,
          keyPrefix: `${deps.store.prefix}:rate:callback:${label}`,
          points,
          duration,
        })
      : new RateLimiterMemory({ keyPrefix: `callback:${label}`, points, duration });
  const perAddress = new BurstyRateLimiter(
    make('address', limits.callbackPostsPerSecond, 1),
    make('address-burst', limits.callbackPostsPerSecond * 2, 10),
  );
  const perToken = make('token', limits.callbackPostsPerTokenPerMinute, 60);

  /** The refusal when `key` is over `limiter`'s budget; a store failure lets the POST through. */
  const overLimit = async (
    limiter: RateLimiterAbstract | BurstyRateLimiter,
    key: string,
    limit: string,
    value: number,
  ): Promise<Response | undefined> => {
    try {
      await limiter.consume(key);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) return undefined;
      deps.onRefused?.('rate_limit');
      const retryAfterMs = Math.max(1, Math.ceil(error.msBeforeNext));
      return refusal(
        429,
        'rate_limited',
        `Too many callback POSTs: the limit is ${value} (${limit}); retry in ${retryAfterMs} ms`,
        {
          'retry-after': String(Math.ceil(retryAfterMs / 1000)),
        },
      );
    }
  };

  return async (request, url, connection) => {
    const token = callbackTokenOf(url.pathname);
    if (token === undefined) return undefined;
    if (request.method.toUpperCase() !== 'POST') {
      return refusal(405, 'method_not_allowed', 'A callback URL takes POST only', { allow: 'POST' });
    }
    const source = deps.clientAddress(request.headers, connection);
    const overAddress = await overLimit(
      perAddress,
      source === undefined ? 'unknown' : addressBudget(source),
      'callbackPostsPerSecond',
      limits.callbackPostsPerSecond,
    );
    if (overAddress) return overAddress;
    // A token of the wrong shape names no hook: answered before a per-token budget is kept for it.
    if (!looksLikeCallbackToken(token)) return answer({ status: 'unknown' });
    const overToken = await overLimit(
      perToken,
      callbackTokenHash(token),
      'callbackPostsPerTokenPerMinute',
      limits.callbackPostsPerTokenPerMinute,
    );
    if (overToken) return overToken;
    const max = limits.maxCallbackBodyBytes;
    const tooLarge = () =>
      refusal(413, 'payload_too_large', `The callback body is over the ${max}-byte limit (maxCallbackBodyBytes)`);
    const declared = Number(request.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > max) return tooLarge();
    const text = await readText(request, max);
    if (text === undefined) return tooLarge();
    const parsed = parseJsonBody(text, limits);
    if (!parsed.ok) {
      const message = ((await parsed.response.json()) as { error?: { message?: string } }).error?.message;
      return refusal(400, 'invalid_json', message ?? 'The callback body is not JSON');
    }
    let delivery: CallbackDelivery;
    try {
      delivery = await deps.engine.deliverCallback(token, parsed.body, deps.check);
    } catch (error) {
      // Logged without the path: the token in it is the hook's only capability.
      deps.logger.error('A callback POST could not be delivered', { error: String(error) });
      return refusal(503, 'unavailable', 'The task store did not answer; retry later', { 'retry-after': '1' });
    }
    const response = answer(delivery);
    if (delivery.status !== 'unknown') {
      deps.observer.observe({
        type: 'callback_posted',
        task: delivery.task,
        name: delivery.name,
        source,
        status: response.status,
      });
    }
    return response;
  };
}

/**
 * Warns, once at start-up, when callback URLs name a public host (`publicUrl`) but no proxy is
 * trusted (`http.trustProxy`): behind a reverse proxy, which a public name usually means, every
 * callback POST then comes from the proxy's address, so all senders share one per-address budget
 * (`callbackPostsPerSecond`) and the audit line names the proxy, not the sender. A loopback
 * `publicUrl` (local development, the test kit) names no proxy and is left alone.
 */
export function warnIfProxyUntrusted(
  logger: Logger,
  settings: { readonly publicUrl: string | undefined; readonly trustProxy: TrustProxy | undefined },
): void {
  const { publicUrl, trustProxy } = settings;
  if (publicUrl === undefined || (trustProxy !== undefined && trustProxy.length > 0)) return;
  if (isLoopbackHost(new URL(publicUrl).hostname)) return;
  logger.warn(
    `publicUrl is ${publicUrl} but http.trustProxy (TRUST_PROXY) is not set: if a proxy forwards the callback POSTs, ` +
      "they all count against the proxy's address (callbackPostsPerSecond) and the audit log names the proxy, " +
      "not the sender. List the proxy's addresses in http.trustProxy (or TRUST_PROXY)",
    { publicUrl },
  );
}

/** The HTTP answer to a delivery (see the table in docs/guide/waiting.md). */
function answer(delivery: CallbackDelivery): Response {
  switch (delivery.status) {
    case 'received':
      return Response.json({ status: 'received' }, { status: 200, headers: { 'cache-control': 'no-store' } });
    case 'invalid':
      return refusal(
        400,
        'invalid_payload',
        `The payload does not fit callback '${delivery.name}': ${delivery.problem}`,
      );
    case 'used':
      return refusal(409, 'already_received', `Callback '${delivery.name}' has received its payload already`);
    case 'timed_out':
      return refusal(410, 'timed_out', `Callback '${delivery.name}' timed out`);
    case 'ended':
      return refusal(
        410,
        'task_ended',
        `The task of callback '${delivery.name}' has ended; its callback URLs are void`,
      );
    case 'unknown':
      return refusal(404, 'not_found', 'No callback has this URL (unknown, or its task expired)');
  }
}

function refusal(status: number, error: string, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error, message }, { status, headers: { 'cache-control': 'no-store', ...headers } });
}
