/**
 * The `Logger` contract and the helpers that need no backend. Apart from `log.ts` (pino) so that
 * tools, runtimes and the host can type their loggers without loading a logging library.
 */
/**
 * The framework's logger: small enough to adapt pino, winston or console in one line. The
 * default is pino (`src/observe/log.ts`); an app may pass a pino logger itself.
 */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

/**
 * A `Logger` that writes nothing: for tests and benchmarks. A server given it also skips
 * building its lifecycle log lines.
 */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function childLogger(parent: Logger, fields: Record<string, unknown>): Logger {
  const merge = (data?: Record<string, unknown>) => ({ ...fields, ...data });
  return {
    debug: (message, data) => parent.debug(message, merge(data)),
    info: (message, data) => parent.info(message, merge(data)),
    warn: (message, data) => parent.warn(message, merge(data)),
    error: (message, data) => parent.error(message, merge(data)),
  };
}
