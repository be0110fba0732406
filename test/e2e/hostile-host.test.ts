/**
 * The `Host` header is the client's to write: it must neither pick a route nor break one. A
 * server's routes (the MCP endpoint, operator routes, callbacks, 404s) and a worker's health
 * port read the path from the request line alone; a Host that is no host at all is refused on
 * `/mcp` by the DNS-rebinding check (403) and ignored elsewhere, never a 500 or a dropped socket.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HealthServer, serveOperatorRoutes } from '../../src/host/operator-routes.js';
import { OpsTools, opsManifest } from '../observe/ops-app.js';
import { type RunningServer, startServer } from './support.js';

/** One raw HTTP/1.1 request (so any Host and request target go out as written); the status and body. */
function rawRequest(port: number, head: string, body = ''): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.once('error', reject);
    socket.once('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    const length = body === '' ? '' : `content-length: ${Buffer.byteLength(body)}\r\n`;
    socket.end(`${head}\r\n${length}connection: close\r\n\r\n${body}`);
  });
}

const HOSTILE = ['localhost/metrics?', 'a b', 'x:99999', '[::1', 'evil.example/callbacks/'];

describe('a hostile Host header on the server', () => {
  let running: RunningServer;
  let port: number;

  beforeAll(async () => {
    running = await startServer({ manifest: opsManifest, instances: [new OpsTools()], metrics: true });
    port = Number(new URL(running.url).port);
  });
  afterAll(() => running?.close());

  it('changes no route: /healthz answers as itself, whatever the Host says', async () => {
    for (const host of HOSTILE) {
      const answer = await rawRequest(port, `GET /healthz HTTP/1.1\r\nhost: ${host}`);
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
      expect(answer.body).toContain('{"status":"ok"}');
    }
  });

  it('answers an unknown path 404 and the MCP endpoint as itself (403 for a Host it refuses), never 500', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    for (const host of HOSTILE) {
      expect((await rawRequest(port, `GET /nowhere HTTP/1.1\r\nhost: ${host}`)).status).toBe(404);
      const mcp = await rawRequest(
        port,
        `POST /mcp HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream`,
        initialize,
      );
      // The DNS-rebinding check reads `localhost/metrics?` as the host name localhost: let in.
      const expected = host === 'localhost/metrics?' ? 200 : 403;
      expect({ host, status: mcp.status }).toEqual({ host, status: expected });
    }
  });

  it('answers a callback URL under a hostile Host as the route does (404 for an unknown token)', async () => {
    const answer = await rawRequest(port, `POST /callbacks/${'A'.repeat(32)} HTTP/1.1\r\nhost: a b`, '{}');
    expect(answer.status).toBe(404);
  });

  it('refuses a request target that is no URL with 400, and keeps serving', async () => {
    expect((await rawRequest(port, 'GET http://[ HTTP/1.1\r\nhost: localhost')).status).toBe(400);
    expect((await rawRequest(port, 'GET /healthz HTTP/1.1\r\nhost: localhost')).status).toBe(200);
  });
});

describe("a hostile Host header on a worker's health port", () => {
  let health: HealthServer;

  beforeAll(async () => {
    health = await serveOperatorRoutes(
      async (_request, url) => (url.pathname === '/healthz' ? Response.json({ status: 'ok' }) : undefined),
      { port: 0, host: '127.0.0.1' },
    );
  });
  afterAll(() => health?.close());

  it('routes by the request line alone, and refuses a target that is no URL with 400', async () => {
    for (const host of HOSTILE) {
      const answer = await rawRequest(health.port, `GET /healthz HTTP/1.1\r\nhost: ${host}`);
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
      expect(answer.body).toContain('{"status":"ok"}');
    }
    expect((await rawRequest(health.port, 'GET http://[ HTTP/1.1\r\nhost: localhost')).status).toBe(400);
    expect((await rawRequest(health.port, 'GET /healthz HTTP/1.1\r\nhost: localhost')).status).toBe(200);
  });
});
