/**
 * Shared plumbing for end-to-end tests: real servers on loopback ports, the real v1 client
 * (2025-11-25), and raw 2026-07-28 requests shaped the way the conformance harness sends them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTaskServer, type TaskServer, type TaskServerOptions } from '../../src/host/task-server.js';
import { silentLogger } from '../../src/observe/logger.js';

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

/**
 * A v1 client on a 2025-11-25 session. It opens the standalone GET stream after `initialize`,
 * as the SDK does, unless `standaloneStream: false`: then its GET is answered 405 before it
 * leaves the client (the way MCP Inspector's "Suppress Notification Stream" does it), so it
 * hears the server only on the responses to its own requests.
 */
export async function connectV1(
  url: string,
  options: {
    token?: string;
    capabilities?: Record<string, unknown>;
    standaloneStream?: boolean;
    /** Sent on every request (an `Idempotency-Key`, say). */
    headers?: Record<string, string>;
  } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'mcp-task-server-e2e', version: '1.0.0' },
    { capabilities: options.capabilities ?? {} },
  );
  const withoutStandaloneStream: typeof fetch = async (input, init) =>
    (init?.method ?? 'GET').toUpperCase() === 'GET'
      ? new Response(null, { status: 405, statusText: 'Method Not Allowed' })
      : fetch(input, init);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...((options.token || options.headers) && {
      requestInit: {
        headers: { ...options.headers, ...(options.token && { Authorization: `Bearer ${options.token}` }) },
      },
    }),
    ...(options.standaloneStream === false && { fetch: withoutStandaloneStream }),
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

/**
 * A 2025-11-25 session opened by hand: the headers its requests carry. Requests on it can be
 * dropped the way a crashed client drops them (abort the fetch), which the SDK client never does.
 */
export async function openRawSession(
  url: string,
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Record<string, string>> {
  const headers = {
    ...options.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: options.capabilities ?? {},
        clientInfo: { name: 'dropper', version: '1' },
      },
    }),
  });
  await init.text();
  const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') as string };
  await fetch(url, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.text());
  return session;
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

export interface SseStream {
  /** Resolves with the next JSON-RPC message matching `accept`, waiting for it if needed. */
  next(accept?: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with every message not yet taken once the server ends the stream (rejects after `timeoutMs`). */
  rest(timeoutMs?: number): Promise<Record<string, unknown>[]>;
  close(): void;
}

/** A `subscriptions/listen` for task ids (2026-07-28), read as the SSE stream it is. */
export async function listenForTasks(
  url: string,
  taskIds: string[],
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string>; id?: number } = {},
): Promise<{ status: number; stream?: SseStream; error?: { code: number; data?: unknown } }> {
  const controller = new AbortController();
  const id = options.id ?? nextId++;
  const response = await fetch(url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? WITH_TASKS,
        },
        notifications: { taskIds },
      },
    }),
  });
  if (!response.headers.get('content-type')?.includes('text/event-stream')) {
    const body = (await response.json()) as { error?: { code: number; data?: unknown } };
    return { status: response.status, ...(body.error && { error: body.error }) };
  }
  return { status: response.status, stream: readSseStream(response, controller) };
}

/** Reads an SSE response as a stream of JSON-RPC messages; `controller` aborts its fetch. */
export function readSseStream(response: Response, controller: AbortController): SseStream {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const received: Record<string, unknown>[] = [];
  let buffer = '';
  let reading: Promise<void> | undefined;
  let ended = false;
  const pump = async () => {
    if (ended) return;
    const { value, done } = await reader.read();
    if (done) {
      ended = true;
      return;
    }
    buffer += decoder.decode(value, { stream: true });
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .join('\n');
      if (data) received.push(JSON.parse(data) as Record<string, unknown>);
    }
  };
  return {
    async next(accept = () => true, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = received.findIndex(accept);
        if (index >= 0) return received.splice(index, 1)[0] as Record<string, unknown>;
        if (ended || Date.now() > deadline) {
          const why = ended ? 'the stream ended' : 'timed out';
          throw new Error(`no matching message (${why}); received ${JSON.stringify(received)}`);
        }
        reading ??= pump().finally(() => {
          reading = undefined;
        });
        await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 50))]);
      }
    },
    async rest(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ended) {
        if (Date.now() > deadline) throw new Error(`the stream did not end; received ${JSON.stringify(received)}`);
        reading ??= pump().finally(() => {
          reading = undefined;
        });
        await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, 50))]);
      }
      return received.splice(0);
    },
    close: () => controller.abort(),
  };
}

/**
 * A raw 2025-11-25 session's standalone GET stream (`session` from `openRawSession`), read as
 * JSON-RPC messages: what the server sends outside any request arrives here.
 */
export async function openStandaloneStream(url: string, session: Record<string, string>): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'GET',
    signal: controller.signal,
    headers: { ...session, accept: 'text/event-stream' },
  });
  if (!response.ok) throw new Error(`the standalone stream was refused: HTTP ${response.status}`);
  return readSseStream(response, controller);
}
