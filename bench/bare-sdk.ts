/**
 * What the HTTP benchmarks' server processes share (`http-server.ts`, `tail-server.ts`): the
 * bare SDK baseline's tool, the framework's lifted budgets, and a loopback listener. Kept free
 * of Redis and bench helpers so `tail-server.ts` can be compiled to `dist/` with it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** The baseline: a v2 `McpServer` with one `registerTool('greet')`, as its documentation shows. */
export function bareServer(): McpServer {
  const server = new McpServer({ name: 'bare-sdk', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'greet',
    { description: 'Greets someone, synchronously.', inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => ({ content: [{ type: 'text', text: `Hello, ${name}!` }] }),
  );
  return server;
}

/**
 * Every bench client is the one anonymous principal, measured against a bare server with no
 * budgets: the framework's per-principal budgets are lifted so they never refuse, while their
 * cost per request stays in what is measured.
 */
export const LIFTED_LIMITS = {
  createsPerSecond: 1e9,
  createBurst: 1e9,
  readsPerSecond: 1e9,
  readBurst: 1e9,
  maxLiveTasksPerPrincipal: 1e9,
  maxSessionsPerPrincipal: 1e9,
} as const;

/** Serves `handle` on a free loopback port at `/mcp`; `close` also runs `closeHandler`. */
export async function listenOnLoopback(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
  closeHandler: () => Promise<void>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeHandler();
    },
  };
}
