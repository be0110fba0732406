/**
 * `createTaskServer()`: the one call an app makes. It binds the generated manifest to the
 * app's instances, picks a runtime, and serves both task dialects over Streamable HTTP and
 * stdio. Task logic lives in the engine and the adapters; this file only assembles them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { TaskEngine } from '../engine/engine.js';
import type { TaskPolicy } from '../engine/policy.js';
import type { TaskExecutor, TaskRuntime } from '../engine/runtime.js';
import { DialectA } from '../protocol/dialect-a.js';
import { DialectB } from '../protocol/dialect-b.js';
import { DialectC } from '../protocol/dialect-c.js';
import { ToolCalls } from '../protocol/tool-calls.js';
import type { TaskManifest } from '../tools/definition.js';
import { createConsoleLogger, type Logger } from '../tools/logger.js';
import { ToolRegistry } from '../tools/registry.js';
import { HttpFront, type HttpFrontOptions } from './http-front.js';
import { defaultPrincipalResolver, type PrincipalResolver } from './principal.js';
import { createProtocolServer, type Era, type ProtocolServerDeps } from './protocol-server.js';
import { chooseRuntime, describeRuntime, type RuntimeChoice } from './runtime-choice.js';
import { attachStatusPush } from './status-push.js';
import { WaiterRegistry, type WaiterStats } from './waiters.js';

export interface TaskServerOptions extends RuntimeChoice {
  /** The `taskManifest` exported by the module `mcp-taskgen` generated. */
  readonly manifest: TaskManifest;
  /** Instances of the decorated classes. Each tool runs on the instance of its class. */
  readonly instances: readonly object[];
  /** `serverInfo`. Defaults: `mcp-task-server`, `0.0.0`. */
  readonly name?: string;
  readonly version?: string;
  readonly title?: string;
  readonly instructions?: string;
  /**
   * A runtime of your own, or a factory that receives the executor for your tools. Default:
   * BullMQ when `redis` is set, else the in-process runtime (tasks end with the process).
   */
  readonly runtime?: TaskRuntime | ((executor: TaskExecutor) => TaskRuntime);
  /** Retention and polling limits. */
  readonly policy?: Partial<TaskPolicy>;
  /** Tasks per `tasks/list` page (default 50). */
  readonly listPageSize?: number;
  /**
   * Also serve the original SEP-1686 form (`_meta["modelcontextprotocol.io/task"]` with a
   * client-chosen id, `notifications/tasks/created`, `tasks/delete`) on 2025-era connections.
   * Historical and off by default: without it that `_meta` key is ignored.
   */
  readonly sep1686?: boolean;
  /** Who owns a task. See `defaultPrincipalResolver`. */
  readonly resolvePrincipal?: PrincipalResolver;
  readonly http?: HttpFrontOptions;
  readonly logger?: Logger;
}

export interface ListenOptions {
  /** Default: `PORT` from the environment, else 3000. `0` picks a free port. */
  readonly port?: number;
  /** Default: `HOST` from the environment, else 127.0.0.1. */
  readonly host?: string;
  /** Default: `/mcp`. */
  readonly path?: string;
}

export interface ListeningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections and closes open sessions (the task server stays usable). */
  close(): Promise<void>;
}

export interface TaskServer {
  readonly engine: TaskEngine;
  readonly registry: ToolRegistry;
  readonly runtime: TaskRuntime;
  /** Serves one web-standard request (mount it in Hono, Bun, Workers-style hosts or tests). */
  fetch(request: Request): Promise<Response>;
  /** Serves Streamable HTTP on node:http. */
  listen(options?: ListenOptions): Promise<ListeningServer>;
  /** Serves this process's stdin/stdout. */
  serveStdio(): StdioServerHandle;
  /**
   * What this process holds open for clients right now: blocking `tasks/result` calls and
   * listen streams per session, and the engine's task followers. For debugging and leak checks;
   * every count returns to zero once its clients are gone.
   */
  stats(): TaskServerStats;
  /** Closes listeners, sessions and the runtime. */
  close(): Promise<void>;
}

export interface TaskServerStats {
  readonly waiters: WaiterStats;
  readonly engine: ReturnType<TaskEngine['waiterStats']>;
}

export function createTaskServer(options: TaskServerOptions): TaskServer {
  const logger = options.logger ?? createConsoleLogger();
  const registry = new ToolRegistry({ manifest: options.manifest, instances: options.instances, logger });
  const runtime =
    typeof options.runtime === 'function'
      ? options.runtime(registry)
      : (options.runtime ?? chooseRuntime(options, registry, logger));
  const engine = new TaskEngine({
    runtime,
    ...(options.policy && { policy: options.policy }),
    ...(options.listPageSize !== undefined && { pageSize: options.listPageSize }),
  });
  const calls = new ToolCalls(engine, registry);
  const principals = options.resolvePrincipal ?? defaultPrincipalResolver;
  const waiters = new WaiterRegistry();
  const deps: ProtocolServerDeps = {
    engine,
    dialectB: new DialectB(calls),
    dialectC: new DialectC(calls),
    ...(options.sep1686 && { dialectA: new DialectA(calls) }),
    resolvePrincipal: principals,
    serverInfo: {
      name: options.name ?? 'mcp-task-server',
      version: options.version ?? '0.0.0',
      ...(options.title !== undefined && { title: options.title }),
    },
    ...(options.instructions !== undefined && { instructions: options.instructions }),
    logger,
    waiters,
  };

  const serverFor = (unit: { era: Era; listTasks: boolean; transport: 'http' | 'stdio' }): Server => {
    if (unit.era === 'modern') return createProtocolServer(deps, { ...unit });
    // A 2025 session lives as long as its connection: push its tasks' status while it does.
    let push: ReturnType<typeof attachStatusPush> | undefined;
    const server = createProtocolServer(deps, {
      ...unit,
      onTaskCreated: (taskId, caller, progressToken) => push?.track(taskId, caller, progressToken),
    });
    push = attachStatusPush(server, engine);
    const previousOnClose = server.onclose;
    server.onclose = () => {
      push?.detach();
      previousOnClose?.();
    };
    return server;
  };

  const front = new HttpFront(
    (unit) => serverFor({ ...unit, transport: 'http' }),
    engine,
    principals,
    waiters,
    logger,
    options.http,
  );
  const listeners = new Set<ListeningServer>();
  const stdioHandles = new Set<StdioServerHandle>();
  logger.info(describeRuntime(runtime, options.workers));

  return {
    engine,
    registry,
    runtime,
    fetch: (request) => front.fetch(request),
    stats: () => ({ waiters: waiters.stats(), engine: engine.waiterStats() }),

    async listen(listen = {}) {
      const path = listen.path ?? '/mcp';
      const host = listen.host ?? process.env.HOST ?? '127.0.0.1';
      const port = listen.port ?? (process.env.PORT ? Number(process.env.PORT) : 3000);
      const handle = toNodeHandler({ fetch: (request: Request) => front.fetch(request) });
      const server = http.createServer((req, res) => {
        const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
        if (pathname !== path) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end(`Not found. The MCP endpoint is ${path}\n`);
          return;
        }
        flushEventStreamHeaders(res);
        void handle(req, res);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const listening: ListeningServer = {
        url: `http://${shownHost}:${address.port}${path}`,
        port: address.port,
        close: () =>
          new Promise<void>((resolve) => {
            listeners.delete(listening);
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
      listeners.add(listening);
      return listening;
    },

    serveStdio() {
      const handle = sdkServeStdio(({ era }) => serverFor({ era, listTasks: true, transport: 'stdio' }));
      stdioHandles.add(handle);
      return handle;
    },

    async close() {
      await Promise.allSettled([...listeners].map((listening) => listening.close()));
      await Promise.allSettled([...stdioHandles].map((handle) => handle.close()));
      await front.close();
      await runtime.close();
    },
  };
}

/**
 * The SDK's node adapter writes the head of a response but sends it only with the first body
 * chunk, so a client opening the standalone SSE stream waits for the first event (up to the
 * keep-alive, ~15 s) just to see the headers. Event streams get their headers sent at once.
 */
function flushEventStreamHeaders(res: http.ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http.ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const result = writeHead(...args);
    const headers = args.find((arg): arg is Record<string, unknown> => typeof arg === 'object' && arg !== null);
    const type = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    if (String(type ?? '').includes('text/event-stream')) res.flushHeaders();
    return result;
  }) as typeof res.writeHead;
}
