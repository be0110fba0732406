/**
 * The MCP endpoint's own node:http plumbing: one headers-only Request, the body read once from
 * the socket within its bounds, the answer written back until the client hangs up.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { hangupOf, readNodeJsonBody, requestHead, requestUrl, writeResponse } from '../../src/host/node-http.js';
import type { BodyReading } from '../../src/http/json-body.js';

const limits = { maxBodyBytes: 64, maxJsonDepth: 3 };
let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Serves one handler on a loopback port; returns its URL. */
async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) {
  server = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** Posts `chunks` without a Content-Length (chunked), as a client that does not declare its size. */
function postChunked(url: string, chunks: string[], method = 'POST'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

/** A server answering what `readNodeJsonBody` made of the body. */
function bodyEcho() {
  return serve(async (req, res) => {
    const reading: BodyReading | undefined = await readNodeJsonBody(req, limits);
    const response = !reading
      ? Response.json({ none: true })
      : reading.ok
        ? Response.json({ body: reading.body })
        : reading.response;
    await writeResponse(res, response, new AbortController().signal);
  });
}

describe('reading the body from the socket', () => {
  it('takes a chunked body of maxBodyBytes and refuses one byte more with 413, naming the limit', async () => {
    const url = await bodyEcho();
    const exactly = `{"a":"${'x'.repeat(limits.maxBodyBytes - 8)}"}`;
    expect(exactly.length).toBe(limits.maxBodyBytes);
    const taken = await postChunked(url, [exactly.slice(0, 10), exactly.slice(10)]);
    expect(taken.status).toBe(200);
    expect(JSON.parse(taken.text)).toEqual({ body: { a: 'x'.repeat(limits.maxBodyBytes - 8) } });
    const over = await postChunked(url, [exactly.slice(0, 10), `${exactly.slice(10, -1)}x}`]);
    expect(over.status).toBe(413);
    expect(JSON.parse(over.text).error.message).toMatch(/64-byte limit \(maxBodyBytes\)/);
  });

  it('refuses JSON nested deeper than maxJsonDepth, and text that is not JSON, with -32700', async () => {
    const url = await bodyEcho();
    expect((await postChunked(url, ['[[[1]]]'])).status).toBe(200);
    const deep = await postChunked(url, ['[[[[1]]]]']);
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.text).error).toMatchObject({ code: -32700, message: expect.stringMatching(/maxJsonDepth/) });
    const broken = await postChunked(url, ['{"a":']);
    expect(JSON.parse(broken.text).error).toMatchObject({ code: -32700 });
  });

  it('reads no body for a method other than POST', async () => {
    const url = await bodyEcho();
    expect(JSON.parse((await postChunked(url, [], 'DELETE')).text)).toEqual({ none: true });
  });
});

/** The headers-only request `requestHead` makes, on `signal`, of one request sent to `path`. */
async function headOf(path: string, options: http.RequestOptions, signal: AbortSignal): Promise<Request | undefined> {
  let seen: Request | undefined;
  const url = await serve(async (req, res) => {
    seen = requestHead(req, requestUrl(req.url) as URL, signal);
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    const request = http.request(`${url}${path}`, options, (r) => {
      r.resume();
      r.on('end', resolve);
    });
    request.on('error', reject);
    request.end();
  });
  return seen;
}

describe('the headers-only request', () => {
  it('carries the method, URL and every header value, and its signal follows the hangup', async () => {
    const hangup = new AbortController();
    const seen = await headOf('?x=1', { method: 'DELETE', headers: { 'x-one': ['a', 'b'] } }, hangup.signal);
    expect(seen?.method).toBe('DELETE');
    expect(seen?.url).toMatch(/\/mcp\?x=1$/);
    expect(seen?.headers.get('x-one')).toBe('a, b');
    expect(seen?.body).toBeNull();
    expect(seen?.signal.aborted).toBe(false);
    hangup.abort();
    expect(seen?.signal.aborted).toBe(true);
  });

  it('is the hangup signal itself, not a second signal following it (whose link outlives young collections)', async () => {
    const hangup = new AbortController();
    expect((await headOf('', {}, hangup.signal))?.signal).toBe(hangup.signal);
  });
});

describe('the request URL', () => {
  it('is the request target on a fixed origin: no Host header reaches it', () => {
    expect(requestUrl('/mcp?x=1')?.href).toBe('http://localhost/mcp?x=1');
    // A path that starts with two slashes is a path, not another host.
    expect(requestUrl('//evil.example/metrics')?.pathname).toBe('//evil.example/metrics');
    // An absolute-form target keeps its path and query only.
    expect(requestUrl('http://evil.example/healthz?a=b')?.href).toBe('http://localhost/healthz?a=b');
    expect(requestUrl(undefined)?.pathname).toBe('/');
    expect(requestUrl('http://[')).toBeUndefined();
  });

  it('is no URL when its path steps out of itself: dot segments (also as %2e) and backslashes', () => {
    for (const target of [
      '/healthz/../metrics',
      '/mcp/%2e%2e/metrics',
      '/mcp/.%2E/metrics',
      '/mcp/%2e./metrics',
      '/./metrics',
      '/mcp/..',
      '/mcp\\..\\metrics',
      '/mcp\\metrics',
      'http://evil.example/a/../metrics',
    ]) {
      expect(requestUrl(target), target).toBeUndefined();
    }
    // Dots inside a name, and in the query, are no segments.
    expect(requestUrl('/mcp/v1.2..3?next=../x')?.pathname).toBe('/mcp/v1.2..3');
    expect(requestUrl('/.well-known/x')?.pathname).toBe('/.well-known/x');
  });
});

describe('writing the answer', () => {
  it('writes status, headers and a streamed body, and stops reading the body once the client hangs up', async () => {
    let pulls = 0;
    let cancelled = false;
    const stopped = new Promise<void>((resolve) => {
      void serve(async (_req, res) => {
        const hangup = hangupOf(res);
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            pulls++;
            await new Promise((wait) => setTimeout(wait, 5));
            controller.enqueue(new TextEncoder().encode(`data: ${pulls}\n\n`));
          },
          cancel() {
            cancelled = true;
          },
        });
        await writeResponse(
          res,
          new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-kind': 'stream' } }),
          hangup,
        );
        resolve();
      }).then((url) => {
        const request = http.request(url, (response) => {
          expect(response.statusCode).toBe(200);
          expect(response.headers['x-kind']).toBe('stream');
          response.once('data', () => request.destroy());
        });
        request.end();
      });
    });
    await stopped;
    const pullsAtEnd = pulls;
    expect(cancelled).toBe(true);
    await new Promise((wait) => setTimeout(wait, 30));
    expect(pulls).toBe(pullsAtEnd);
  });

  it('counts no hangup once the answer was all written', async () => {
    let hangup: AbortSignal | undefined;
    const closed = new Promise<void>((resolve) => {
      void serve(async (_req, res) => {
        hangup = hangupOf(res);
        res.once('close', () => resolve());
        await writeResponse(res, Response.json({ done: true }), hangup);
      }).then((url) => http.get(url, (response) => response.resume()));
    });
    await closed;
    expect(hangup?.aborted).toBe(false);
  });
});
