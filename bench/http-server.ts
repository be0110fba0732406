/**
 * The server side of bench/http.ts, in its own process so the load generator does not share
 * its event loop. It serves, on three loopback ports:
 *
 * - `bare`: the SDK alone. A v2 `McpServer` with one `registerTool('greet')` behind the SDK's
 *   own `createMcpHandler` (the same per-request 2026-07-28 handler the framework's modern leg
 *   uses) and `toNodeHandler`: the plain, non-task `tools/call` baseline.
 * - `memory`: the conformance fixture on `createTaskServer`, in-process runtime (tasks run here).
 * - `bullmq`: the same fixture on the BullMQ runtime with `workers: 0`: this process only
 *   serves; the jobs wait in Redis for worker processes (none run during the benchmark).
 *
 * Prints one `READY {...urls}` line, then serves until SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { app } from '../examples/conformance-fixture/app.js';
import { createTaskServer } from '../src/host/task-server.js';
import { silentLogger } from '../src/tools/logger.js';
import { REDIS_URL } from './support.js';

const prefix = process.argv[2];
if (!prefix) throw new Error('usage: http-server.ts <redis prefix>');

function bareServer(): McpServer {
  const server = new McpServer({ name: 'bare-sdk', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'greet',
    { description: 'Greets someone, synchronously.', inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] }),
  );
  return server;
}

async function listenBare(): Promise<{ url: string; close: () => Promise<void> }> {
  const handler = createMcpHandler(() => bareServer(), { legacy: 'reject' });
  const handle = toNodeHandler({ fetch: (request: Request) => handler.fetch(request) });
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

const bare = await listenBare();
// Throughput is measured against a bare server, so the per-principal budgets (every bench
// client is the one anonymous principal) are lifted; their own cost per request stays in.
const limits = {
  createsPerSecond: 1e9,
  createBurst: 1e9,
  readsPerSecond: 1e9,
  readBurst: 1e9,
  maxLiveTasksPerPrincipal: 1e9,
  maxSessionsPerPrincipal: 1e9,
};
const memory = createTaskServer({ ...app, logger: silentLogger, limits });
const bullmq = createTaskServer({
  ...app,
  logger: silentLogger,
  limits,
  redis: { connection: REDIS_URL, prefix, queue: 'http' },
  workers: 0,
});
const [memoryListening, bullmqListening] = await Promise.all([
  memory.listen({ port: 0, host: '127.0.0.1' }),
  bullmq.listen({ port: 0, host: '127.0.0.1' }),
]);

process.stdout.write(
  `READY ${JSON.stringify({ bare: bare.url, memory: memoryListening.url, bullmq: bullmqListening.url })}\n`,
);

process.once('SIGTERM', () => {
  void Promise.allSettled([bare.close(), memory.close(), bullmq.close()]).then(() => process.exit(0));
});
