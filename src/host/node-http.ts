/**
 * Every route on node:http, one web `Request` per call, on a fixed origin (the `Host` header
 * never reaches the URL: the SDK's generic adapter, `toNodeHandler`, built it from Host, so a
 * hostile Host could pick another route, or make the URL unparsable and every answer a 500).
 * On the MCP endpoint the adapter also made each call pay twice:
 * admission needs a headers-only `Request` before any body byte is read, the adapter then built a
 * second one (headers copied again, the body re-wrapped in a web stream, a second abort signal
 * linked to it) and the front read that stream back. Every plain `tools/call` allocated ~20 KB
 * for it, and abort signals and streams outlive young-generation collections on Node 20, which
 * is what sets the tail of a plain call (bench/tail.ts). Here the headers-only `Request` serves
 * both admission and the call, and the body is read once, straight from the socket.
 */
import type http from 'node:http';
import { Readable } from 'node:stream';
import { type Answer, JsonAnswer } from '../http/json-answer.js';
import { type BodyReading, bodyTooLarge, parseJsonBody } from '../http/json-body.js';

/** The origin every request's URL is put on: routing reads the path and query only. */
const FIXED_ORIGIN = 'http://localhost';

/**
 * A dot segment (`.`, `..`, or either spelled with `%2e`) or a backslash in a request path:
 * `URL` would collapse `/mcp/%2e%2e/metrics` to `/metrics` and read `\` as `/`, so a proxy in
 * front that allows or denies by the raw path's prefix would see one route and this server serve
 * another. No client of this server sends one.
 */
const PATH_STEPPING = /(?:^|[/\\])(?:\.|%2e){1,2}(?:[/\\?#]|$)|\\/i;

/**
 * The request target (`req.url`) as a URL on a fixed origin, whatever the `Host` header says: a
 * client's Host (`evil/metrics?`, `a b`) must neither pick the route nor make the URL unparsable.
 * An absolute-form target (`GET http://host/path`) keeps its path and query. `undefined` when
 * the target is no URL at all, or its path has a dot segment or a backslash (`PATH_STEPPING`);
 * the caller answers 400.
 */
export function requestUrl(target: string | undefined): URL | undefined {
  const raw = target ?? '/';
  const queryAt = raw.indexOf('?');
  if (PATH_STEPPING.test(queryAt < 0 ? raw : raw.slice(0, queryAt))) return undefined;
  try {
    // Concatenated, not resolved against a base: `//name/path` is a path here, not another host.
    const url = raw.startsWith('/') ? new URL(`${FIXED_ORIGIN}${raw}`) : new URL(raw);
    return url.origin === FIXED_ORIGIN ? url : new URL(`${FIXED_ORIGIN}${url.pathname}${url.search}`);
  } catch {
    return undefined;
  }
}

/** What a request whose target is no URL gets (see `requestUrl`). */
export function badTargetResponse(): Response {
  return new Response('Bad request: the request target is not a URL\n', {
    status: 400,
    headers: { 'content-type': 'text/plain' },
  });
}

/**
 * A signal that aborts when the client hangs up: `res` closes before its answer was all written.
 * The controller is held by `res` (strongly), so the signal lives as long as the response.
 */
export function hangupOf(res: http.ServerResponse): AbortSignal {
  const hangup = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) hangup.abort();
  });
  return hangup.signal;
}

/**
 * The request line and headers as a web `Request` without a body, on `url` (from `requestUrl`):
 * what admission looks at, and, with the body handed over parsed, all the SDK needs.
 * `request.signal` is `signal` itself, which aborts when the client hangs up.
 *
 * Handed to the constructor, `signal` would be followed by a second signal of undici's through a
 * `WeakRef` and a `FinalizationRegistry` entry that holds `signal` and its listeners until a full
 * collection: every call's pair outlived young collections into old space, about 1 KB per call
 * (bench/README.md, 1 Dec "kept path"). Nothing reads the Request's own signal but through the
 * `signal` getter (undici's internals use their own field), so the getter is shadowed instead.
 */
export function requestHead(req: http.IncomingMessage, url: URL, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else headers.append(name, value);
  }
  const request = new Request(url, {
    method: req.method ?? 'GET',
    headers,
  });
  if (signal) Object.defineProperty(request, 'signal', { value: signal, configurable: true });
  return request;
}

/**
 * A web `Request` on `url` (from `requestUrl`) whose body streams from the socket as it is read
 * (nothing is buffered ahead). For routes that check headers and budgets before reading a
 * bounded body themselves (callbacks, the dashboard) or read none (operator routes).
 */
export function streamingRequest(req: http.IncomingMessage, url: URL, signal?: AbortSignal): Request {
  const head = requestHead(req, url);
  const method = req.method ?? 'GET';
  const withBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers: head.headers,
    ...(signal && { signal }),
    ...(withBody && {
      body: Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>,
      duplex: 'half',
    }),
  } as RequestInit);
}

/**
 * The body of a POST parsed as JSON within `maxBodyBytes` and `maxJsonDepth` (reading stops at
 * the first byte over), as the front reads one; `undefined` for other methods, as there.
 */
export async function readNodeJsonBody(
  req: http.IncomingMessage,
  limits: { readonly maxBodyBytes: number; readonly maxJsonDepth: number },
): Promise<BodyReading | undefined> {
  if (req.method !== 'POST') return undefined;
  const chunks: Buffer[] = [];
  let total = 0;
  const complete = await new Promise<boolean>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limits.maxBodyBytes) {
        cleanup();
        resolve(false);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(true);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
  if (!complete) return { ok: false, response: bodyTooLarge(limits.maxBodyBytes) };
  return parseJsonBody(Buffer.concat(chunks, total).toString('utf8'), limits);
}

/**
 * Writes `answer` to `res`: a `JsonAnswer` in one write with its `Content-Length`; a `Response`'s
 * status and headers (an event stream's sent at once), then its body (a JSON answer in one write,
 * an event stream chunk by chunk, waiting for `drain`), until the client hangs up.
 */
export async function writeResponse(res: http.ServerResponse, answer: Answer, hangup: AbortSignal): Promise<void> {
  if (answer instanceof JsonAnswer) {
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(answer.text),
    });
    res.end(answer.text);
    return;
  }
  const response = answer;
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  // Node sends the head only with the first body chunk: a client opening the standalone SSE
  // stream would wait for the first event (up to the keep-alive, ~15 s) just to see the headers.
  if (headers['content-type']?.includes('text/event-stream')) res.flushHeaders();
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  hangup.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || hangup.aborted) break;
      if (!res.write(value)) await drained(res, hangup);
    }
  } catch {
    // The body failed or was cancelled by a hangup: end what was sent.
  } finally {
    hangup.removeEventListener('abort', stop);
    res.end();
  }
}

function drained(res: http.ServerResponse, hangup: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      hangup.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    hangup.addEventListener('abort', done, { once: true });
  });
}
