/**
 * Shared plumbing for end-to-end tests: real servers on loopback ports, the real v1 client
 * (2025-11-25), and raw 2026-07-28 requests shaped the way the conformance harness sends them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTaskServer, type TaskServer, type TaskServerOptions } from '../../src/host/task-server.js';
import { silentLogger } from '../../src/tools/logger.js';

export interface RunningServer {
  readonly server: TaskServer;
  readonly url: string;
  close(): Promise<void>;
}

export async function startServer(options: TaskServerOptions): Promise<RunningServer> {
  const server = createTaskServer({ logger: silentLogger, ...options });
  const listening = await server.listen({ port: 0, host: '127.0.0.1' });
  return { server, url: listening.url, close: () => server.close() };
}

export async function connectV1(
  url: string,
  options: { token?: string; capabilities?: Record<string, unknown> } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'mcp-task-server-e2e', version: '1.0.0' },
    { capabilities: options.capabilities ?? {} },
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(options.token && { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } }),
  });
  await client.connect(transport);
  return client;
}

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

export interface RpcReply {
  readonly status: number;
  readonly result?: Record<string, unknown> & { [key: string]: unknown };
  readonly error?: { code: number; message: string; data?: unknown };
}

let nextId = 1;

/** One 2026-07-28 request: per-request `_meta`, `Mcp-Method` and `Mcp-Name` as a real client sends. */
export async function rpc2026(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<RpcReply> {
  const name =
    method === 'tools/call'
      ? (params.name as string)
      : method.startsWith('tasks/')
        ? (params.taskId as string)
        : undefined;
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  const id = nextId++;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name !== undefined && { 'mcp-name': name }),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...rest,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-server-e2e', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? WITH_TASKS,
          ..._meta,
        },
      },
    }),
  });
  const text = await response.text();
  const message = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)))
        .find((m) => m.id === id)
    : JSON.parse(text);
  return { status: response.status, ...message };
}

export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
