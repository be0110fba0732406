/**
 * The entry point most apps need: serve over Streamable HTTP (or stdio with `--stdio`), print
 * where, and shut down cleanly on SIGTERM/SIGINT.
 */
import { limitsFromEnvironment } from './limits.js';
import { redisFromEnvironment } from './runtime-choice.js';
import { createTaskServer, type ListenOptions, type TaskServer, type TaskServerOptions } from './task-server.js';

export interface RunOptions extends TaskServerOptions {
  /** Command-line arguments to read `--stdio` from. Default: `process.argv.slice(2)`. */
  readonly argv?: readonly string[];
  readonly listen?: ListenOptions;
}

/**
 * Reads `REDIS_URL` (the BullMQ runtime; `REDIS_PREFIX` namespaces its keys), `WORKERS`
 * (tasks this process runs at once; `0` leaves them to worker processes) and the limits
 * (`MCP_TASK_<LIMIT>`, see `limitsFromEnvironment`) from the environment unless the options
 * say otherwise.
 */
export async function runTaskServer(options: RunOptions): Promise<TaskServer> {
  const redis = options.redis ?? redisFromEnvironment();
  const workers = options.workers ?? (process.env.WORKERS ? Number(process.env.WORKERS) : undefined);
  const argv = options.argv ?? process.argv.slice(2);
  const server = createTaskServer({
    // Over stdio, stdout carries the protocol: even the first log line goes to stderr.
    ...(argv.includes('--stdio') && { logDestination: 'stderr' as const }),
    ...options,
    limits: { ...limitsFromEnvironment(), ...options.limits },
    ...(redis && { redis }),
    ...(workers !== undefined && { workers }),
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal} received, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  if (argv.includes('--stdio')) {
    server.serveStdio();
    return server;
  }
  const listening = await server.listen(options.listen);
  // stdout, so scripts can wait for this line.
  process.stdout.write(`MCP task server listening on ${listening.url}\n`);
  return server;
}
