/**
 * Logs: pino behind the framework's small `Logger` interface, and the observer that writes one
 * line per lifecycle event. JSON lines when the output is not a terminal (what log shippers
 * read); pino-pretty's readable form in a terminal.
 */
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { LifecycleEvent, TaskObserver } from '../engine/lifecycle.js';
import type { Logger } from './logger.js';

/** Which kind of process writes a line: a server answering clients, or a worker running tasks. */
export type ProcessRole = 'server' | 'worker';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
/**
 * A log threshold, as `MCP_TASK_LOG_LEVEL` spells it: lines below it are not written, and
 * `silent` writes none.
 */
export type LogLevel = (typeof LEVELS)[number];

/** The part of a pino logger the framework uses; any pino-compatible logger has it. */
export interface PinoLike {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
  child(bindings: Record<string, unknown>): PinoLike;
  level: string;
}

export function isPinoLike(value: unknown): value is PinoLike {
  const candidate = value as Partial<PinoLike> | null;
  return typeof candidate?.child === 'function' && typeof candidate.level === 'string';
}

/**
 * A process's output for log lines. Over stdio, stdout carries the protocol, so lines move to
 * stderr once a process serves stdio (`useStderr`); otherwise they go to stdout, as container
 * platforms expect.
 */
export class LogOutput implements DestinationStream {
  private stderr = false;
  private readonly pretty: Map<NodeJS.WriteStream, (line: string) => string> = new Map();

  constructor(private readonly format: 'auto' | 'json' | 'pretty' = readFormat()) {}

  useStderr(): void {
    this.stderr = true;
  }

  write(line: string): void {
    const target = this.stderr ? process.stderr : process.stdout;
    const pretty = this.format === 'pretty' || (this.format === 'auto' && target.isTTY === true);
    target.write(pretty ? this.prettify(target, line) : line);
  }

  private prettify(target: NodeJS.WriteStream, line: string): string {
    let format = this.pretty.get(target);
    if (!format) {
      // Loaded on the first readable line only: servers in production write JSON and never pay for it.
      const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
      format = pretty.prettyFactory({ colorize: target.isTTY === true, ignore: 'pid,hostname' });
      this.pretty.set(target, format);
    }
    return format(line);
  }
}

export interface CreateLoggerOptions {
  readonly role?: ProcessRole;
  /** Default: `MCP_TASK_LOG_LEVEL`, else `info`. */
  readonly level?: LogLevel;
  readonly output?: DestinationStream;
}

/** The framework's default pino logger: the level from `MCP_TASK_LOG_LEVEL`, `role` on every line. */
export function createPinoLogger(options: CreateLoggerOptions = {}): PinoLogger {
  return pino(
    {
      level: options.level ?? readLevel(),
      base: { pid: process.pid, hostname: undefined, ...(options.role && { role: options.role }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: pino.stdSerializers.err },
    },
    options.output ?? new LogOutput(),
  );
}

/**
 * The `Logger` the framework writes through, backed by a pino(-compatible) logger: the message
 * becomes pino's `msg`, the data its fields. An `err` field holding an Error keeps its stack.
 */
export function loggerFromPino(target: PinoLike): Logger & { readonly pino: PinoLike } {
  const write = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, data?: Record<string, unknown>) =>
    target[level](data ?? {}, message);
  return { pino: target, debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** The app's logger as the framework uses it: a `Logger` stays as it is, a pino logger is adapted. */
export function toLogger(value: Logger | PinoLike): Logger {
  return isPinoLike(value) ? loggerFromPino(value) : value;
}

export function readLevel(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const value = env.MCP_TASK_LOG_LEVEL;
  return (LEVELS as readonly string[]).includes(value ?? '') ? (value as LogLevel) : 'info';
}

function readFormat(env: NodeJS.ProcessEnv = process.env): 'auto' | 'json' | 'pretty' {
  const value = env.MCP_TASK_LOG_FORMAT;
  return value === 'json' || value === 'pretty' ? value : 'auto';
}

/**
 * One log line per lifecycle event, with `taskId`, `tool`, `principal`, the process `role` and
 * the queue job id. Progress is `debug`; a failure is `error` with the stack of what was thrown.
 */
export function logObserver(logger: Logger, role: ProcessRole): TaskObserver {
  return {
    observe(event) {
      const fields: Record<string, unknown> = {
        event: event.type,
        taskId: event.task.taskId,
        tool: event.task.tool,
        principal: event.task.principal,
        role,
        ...(event.task.jobId !== undefined && { jobId: event.task.jobId }),
      };
      const line = describe(event);
      logger[line.level](line.message, { ...fields, ...line.data });
    },
  };
}

function describe(event: LifecycleEvent): {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  data?: Record<string, unknown>;
} {
  switch (event.type) {
    case 'created':
      return {
        level: 'info',
        message: 'task created',
        data: {
          ttlMs: event.ttlMs,
          ...(event.priority !== undefined && { priority: event.priority }),
          ...(event.toolVersion !== undefined && { toolVersion: event.toolVersion }),
        },
      };
    case 'idempotent_hit':
      return {
        level: 'info',
        message: 'task returned for a repeated idempotent create',
        data: { idempotentHit: true, status: event.status },
      };
    case 'started':
      return {
        level: 'info',
        message: event.resumed ? `task resumed on ${event.worker}` : `task started on ${event.worker}`,
        data: { worker: event.worker, queueWaitMs: event.queueWaitMs, resumed: event.resumed },
      };
    case 'progress':
      return {
        level: 'debug',
        message: 'task progress',
        data: {
          ...(event.message !== undefined && { statusMessage: event.message }),
          ...(event.progress !== undefined && { progress: event.progress }),
          ...(event.total !== undefined && { total: event.total }),
        },
      };
    case 'waiting':
      return {
        level: 'info',
        message: `task waits (${event.reason})`,
        data:
          event.reason === 'version'
            ? { reason: event.reason, version: event.version, workerVersion: event.workerVersion }
            : { reason: event.reason, running: event.running, limit: event.limit },
      };
    case 'input_requested':
      return { level: 'info', message: 'task input requested', data: { key: event.key } };
    case 'answered':
      return { level: 'info', message: 'task answered', data: { keys: event.keys } };
    case 'paused':
      return { level: 'info', message: 'task paused for input', data: { keys: event.keys } };
    case 'parked':
      if (event.reason === 'children') {
        return {
          level: 'info',
          message: `task parked (${event.reason}: ${event.done} of ${event.count} done)`,
          data: { reason: event.reason, count: event.count, done: event.done },
        };
      }
      if (event.reason === 'callback') {
        return {
          level: 'info',
          message: `task parked (${event.reason})`,
          data: { reason: event.reason, name: event.name },
        };
      }
      return {
        level: 'info',
        message: `task parked (${event.reason}) until ${new Date(event.until).toISOString()}`,
        data: { reason: event.reason, key: event.key, until: new Date(event.until).toISOString() },
      };
    case 'woke':
      if (event.reason === 'children') {
        return {
          level: 'info',
          message: `task woke (${event.reason})`,
          data: { reason: event.reason, count: event.count },
        };
      }
      if (event.reason === 'callback') {
        return {
          level: 'info',
          message: `task woke (${event.reason})`,
          data: { reason: event.reason, name: event.name, outcome: event.outcome },
        };
      }
      return {
        level: 'info',
        message: `task woke (${event.reason})`,
        data: {
          reason: event.reason,
          key: event.key,
          until: new Date(event.until).toISOString(),
          lateMs: event.lateMs,
        },
      };
    case 'callback_posted':
      return {
        level: event.status < 300 ? 'info' : 'warn',
        message: 'task callback posted',
        data: { name: event.name, source: event.source ?? 'unknown', status: event.status },
      };
    case 'spawned':
      return {
        level: 'info',
        message: `task spawned ${event.tool} ${event.child}`,
        data: { child: event.child, childTool: event.tool, key: event.key },
      };
    case 'completed':
      return { level: 'info', message: 'task completed', data: { durationMs: event.durationMs, runMs: event.runMs } };
    case 'failed':
      return {
        level: 'error',
        message: 'task failed',
        data: {
          durationMs: event.durationMs,
          runMs: event.runMs,
          kind: event.kind,
          ...(event.code !== undefined && { code: event.code }),
          error: event.message,
          ...(event.cause instanceof Error && { err: event.cause }),
        },
      };
    case 'cancelled':
      return { level: 'info', message: 'task cancelled' };
    case 'deleted':
      return { level: 'info', message: 'task deleted' };
    case 'result_read':
      return { level: 'info', message: 'task result read' };
    case 'expired':
      return { level: 'info', message: 'task expired' };
    case 'aborted':
      return { level: 'info', message: 'task run stopped', data: { reason: event.reason } };
    case 'output_invalid':
      return { level: 'error', message: 'task output does not match its schema', data: { detail: event.detail } };
    case 'retry_scheduled':
      return {
        level: 'warn',
        message: `task attempt ${event.attempt} of ${event.attempts} failed; retrying`,
        data: { attempt: event.attempt, attempts: event.attempts, delayMs: event.delayMs, reason: event.reason },
      };
    case 'orphaned':
      return {
        level: 'error',
        message: `task job failed: no record found after ${event.waitedMs} ms`,
        data: { waitedMs: event.waitedMs, reason: event.reason },
      };
    case 'timed_out':
      return {
        level: 'warn',
        message: `task attempt ${event.attempt} of ${event.attempts} timed out`,
        data: {
          attempt: event.attempt,
          attempts: event.attempts,
          timeoutMs: event.timeoutMs,
          reason: `timed out after ${event.timeoutMs} ms`,
        },
      };
  }
}

/**
 * A pino logger writing to stderr, never stdout: over stdio, stdout carries the protocol.
 * `MCP_TASK_LOG_LEVEL` (`debug` | `info` | `warn` | `error` | `silent`) sets the threshold; the
 * default is `info`. JSON lines, or readable ones when stderr is a terminal.
 */
export function createConsoleLogger(level: LogLevel = readLevel()): Logger {
  const output = new LogOutput();
  output.useStderr();
  return loggerFromPino(createPinoLogger({ level, output }));
}
