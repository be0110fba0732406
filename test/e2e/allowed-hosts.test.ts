/**
 * A server reached by another name than localhost (behind a reverse proxy, in a container):
 * `ALLOWED_HOSTS` / `ALLOWED_ORIGINS` widen the DNS-rebinding checks of `runTaskServer` to the
 * names listed, and only to them.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppProcess, startAppProcess } from './processes.js';

let server: AppProcess;

beforeAll(async () => {
  server = await startAppProcess('repo-scan', 'server', {
    ALLOWED_HOSTS: 'tasks.example.com, localhost',
    ALLOWED_ORIGINS: 'console.example.com',
  });
}, 30_000);
afterAll(() => server?.stop());

/** POSTs an initialize with the given Host (and Origin) header; resolves with the HTTP status. */
function initializeAs(host: string, origin?: string): Promise<number> {
  const url = new URL(server.url!);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          host,
          ...(origin && { origin }),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

describe('ALLOWED_HOSTS and ALLOWED_ORIGINS', () => {
  it('accepts the listed host names, with or without a port', async () => {
    expect(await initializeAs('tasks.example.com')).toBe(200);
    expect(await initializeAs('tasks.example.com:8443')).toBe(200);
    expect(await initializeAs(`localhost:${new URL(server.url!).port}`)).toBe(200);
  });

  it('refuses any other host name', async () => {
    expect(await initializeAs('evil.example.net')).toBe(403);
    // 127.0.0.1 was a default; a list replaces the defaults.
    expect(await initializeAs('127.0.0.1')).toBe(403);
  });

  it('accepts browsers from pages on the listed origin host names only', async () => {
    expect(await initializeAs('tasks.example.com', 'https://console.example.com')).toBe(200);
    expect(await initializeAs('tasks.example.com', 'https://evil.example.net')).toBe(403);
  });
});
