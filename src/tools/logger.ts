/** The framework's logger: small enough to adapt pino, winston or console in one line. */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

type Level = keyof Logger;
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/**
 * Writes to stderr, never stdout: over stdio, stdout carries the protocol. `MCP_TASK_LOG_LEVEL`
 * (`debug` | `info` | `warn` | `error` | `silent`) sets the threshold; the default is `info`.
 */
export function createConsoleLogger(level: Level | 'silent' = readLevel()): Logger {
  const threshold = level === 'silent' ? LEVELS.length : LEVELS.indexOf(level);
  const write = (at: Level) => (message: string, data?: Record<string, unknown>) => {
    if (LEVELS.indexOf(at) < threshold) return;
    const suffix = data && Object.keys(data).length > 0 ? ` ${JSON.stringify(data)}` : '';
    process.stderr.write(`${at.padEnd(5)} ${message}${suffix}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function readLevel(): Level | 'silent' {
  const value = process.env.MCP_TASK_LOG_LEVEL;
  return value === 'silent' || LEVELS.includes(value as Level) ? (value as Level | 'silent') : 'info';
}

export function childLogger(parent: Logger, fields: Record<string, unknown>): Logger {
  const merge = (data?: Record<string, unknown>) => ({ ...fields, ...data });
  return {
    debug: (message, data) => parent.debug(message, merge(data)),
    info: (message, data) => parent.info(message, merge(data)),
    warn: (message, data) => parent.warn(message, merge(data)),
    error: (message, data) => parent.error(message, merge(data)),
  };
}
