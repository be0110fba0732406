/**
 * The entry point most apps need: serve over Streamable HTTP (or stdio with `--stdio`), print
 * where, and shut down cleanly on SIGTERM/SIGINT.
 */
import { readConfigOrExit } from './config.js';
import { limitsFromEnvironment } from './limits.js';
import { createTaskServer, type ListenOptions, type TaskServer, type TaskServerOptions } from './task-server.js';

export interface RunOptions extends TaskServerOptions {
  /** Command-line arguments to read `--stdio` from. Default: `process.argv.slice(2)`. */
  readonly argv?: readonly string[];
  readonly listen?: ListenOptions;
}

/**
 * Reads the environment once (see `readConfig`: `REDIS_URL`, `REDIS_PREFIX`, `WORKERS`, `PORT`,
 * `HOST`, the worker timings, `MCP_TASK_UNAWARE_CLIENTS`, `MCP_TASK_UNAWARE_GRACE_MS`; and the limits, `MCP_TASK_<LIMIT>`, see `limitsFromEnvironment`)
 * unless the options say otherwise. A bad value ends the process
 * with one line naming the variable and what it accepts (exit status 2). `ALLOWED_HOSTS` and
 * `ALLOWED_ORIGINS` (comma-separated host names for the DNS-rebinding checks, for a server
 * reached by other names than localhost) widen the HTTP front's defaults; `TRUST_PROXY`
 * (comma-separated proxy addresses or ranges) sets `http.trustProxy`.
 */
export async function runTaskServer(options: RunOptions): Promise<TaskServer> {
  const config = readConfigOrExit();
  const redis = options.redis ?? config.redis;
  const workers = options.workers ?? config.workers;
  const allowedHosts = options.http?.allowedHosts ?? namesFromEnvironment('ALLOWED_HOSTS');
  const allowedOrigins = options.http?.allowedOrigins ?? namesFromEnvironment('ALLOWED_ORIGINS');
  const trustProxy = options.http?.trustProxy ?? namesFromEnvironment('TRUST_PROXY');
  const argv = options.argv ?? process.argv.slice(2);
  let server: TaskServer;
  try {
    const limits = { ...limitsFromEnvironment(), ...options.limits };
    server = createTaskServer({
      // Over stdio, stdout carries the protocol: even the first log line goes to stderr.
      ...(argv.includes('--stdio') && { logDestination: 'stderr' as const }),
      ...(config.requestStateKey !== undefined && { requestStateKey: config.requestStateKey }),
      ...options,
      // The app's own settings win over the environment's, field by field.
      ...((config.unawareClients || options.unawareClients) && {
        unawareClients: { ...config.unawareClients, ...options.unawareClients },
      }),
      limits,
      ...(redis && { redis }),
      ...(workers !== undefined && { workers }),
      ...((allowedHosts || allowedOrigins || trustProxy) && {
        http: {
          ...options.http,
          ...(allowedHosts && { allowedHosts }),
          ...(allowedOrigins && { allowedOrigins }),
          ...(trustProxy && { trustProxy }),
        },
      }),
    });
  } catch (error) {
    // A contradiction between settings (such as WORKERS=0 without Redis): one line, not a trace.
    if (!(error instanceof RangeError)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
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
  const listening = await server.listen({
    ...(config.port !== undefined && { port: config.port }),
    ...(config.host !== undefined && { host: config.host }),
    ...options.listen,
  });
  // stdout, so scripts can wait for this line.
  process.stdout.write(`MCP task server listening on ${listening.url}\n`);
  return server;
}

/** A comma-separated list of host names from the environment; undefined when unset or empty. */
function namesFromEnvironment(variable: string): string[] | undefined {
  const names = (process.env[variable] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  return names.length > 0 ? names : undefined;
}
