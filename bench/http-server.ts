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
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { app } from '../examples/conformance-fixture/app.js';
import { createTaskServer } from '../src/host/task-server.js';
import { silentLogger } from '../src/observe/logger.js';
import { bareServer, LIFTED_LIMITS, listenOnLoopback } from './bare-sdk.js';
import { REDIS_URL } from './support.js';

const prefix = process.argv[2];
if (!prefix) throw new Error('usage: http-server.ts <redis prefix>');

async function listenBare(): Promise<{ url: string; close: () => Promise<void> }> {
  const handler = createMcpHandler(() => bareServer(), { legacy: 'reject' });
  return listenOnLoopback(toNodeHandler({ fetch: (request: Request) => handler.fetch(request) }), () =>
    handler.close(),
  );
}

const bare = await listenBare();
const memory = createTaskServer({ ...app, logger: silentLogger, limits: LIFTED_LIMITS });
const bullmq = createTaskServer({
  ...app,
  logger: silentLogger,
  limits: LIFTED_LIMITS,
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
