/**
 * A task server built with nothing but the v1 SDK's experimental tasks API
 * (`@modelcontextprotocol/sdk@1.32.2`: `registerToolTask`, `InMemoryTaskStore`), the way its
 * own example server is written. No code of ours runs here: it is the "any other server" our
 * client and `mcp-task` must drive. Speaks 2025-11-25 only.
 *
 * Run as a script it prints its URL on stdout and serves until killed.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

export interface BareServer {
  readonly url: string;
  close(): Promise<void>;
}

function buildServer(taskStore: InMemoryTaskStore): McpServer {
  const server = new McpServer(
    { name: 'bare-v1-task-server', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  server.experimental.tasks.registerToolTask(
    'delay',
    {
      description: 'Waits, then says how long it waited',
      inputSchema: { duration: z.number().describe('Milliseconds to wait') },
      execution: { taskSupport: 'required' },
    },
    {
      async createTask({ duration }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 100 });
        setTimeout(() => {
          store
            .storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `Waited ${duration}ms` }] })
            .catch(() => {});
        }, duration);
        return { task };
      },
      getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId),
      getTaskResult: (_args, { taskId, taskStore: store }) => store.getTaskResult(taskId) as never,
    },
  );
  server.experimental.tasks.registerToolTask(
    'confirm',
    {
      description: 'Asks whether to go ahead, then says what it did',
      inputSchema: { what: z.string().describe('What to do') },
      execution: { taskSupport: 'required' },
    },
    {
      async createTask({ what }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 100 });
        (async () => {
          const answer = await server.server.elicitInput(
            {
              mode: 'form',
              message: `Go ahead with ${what}?`,
              requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } }, required: ['go'] },
            },
            { relatedTask: { taskId: task.taskId } },
          );
          const text = answer.action === 'accept' && answer.content?.go ? `Did ${what}` : `Skipped ${what}`;
          await store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text }] });
        })().catch(() => {});
        return { task };
      },
      getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId),
      getTaskResult: (_args, { taskId, taskStore: store }) => store.getTaskResult(taskId) as never,
    },
  );
  return server;
}

export async function startBareV1Server(port = 0): Promise<BareServer> {
  const taskStore = new InMemoryTaskStore();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport && req.method === 'POST' && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      transport = created;
      await buildServer(taskStore).connect(created);
    }
    if (!transport) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null }),
      );
      return;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(port, '127.0.0.1', resolve));
  const address = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    async close() {
      await Promise.allSettled([...transports.values()].map((t) => t.close()));
      taskStore.cleanup();
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await startBareV1Server();
  process.stdout.write(`${server.url}\n`);
}
