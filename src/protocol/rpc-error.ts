/**
 * JSON-RPC errors as the adapters raise them. The host turns them into the SDK's error type;
 * keeping our own class keeps the adapters free of SDK imports and easy to test.
 */
import { type LimitExceeded, TaskError } from '../engine/errors.js';
import { InvalidArgumentsError, UnknownToolError } from '../tools/registry.js';

export const ErrorCode = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ParseError: -32700,
  /** Implementation-defined: a quota of the caller is used up (`data: { limit, value }`). */
  LimitExceeded: -32010,
  /** Implementation-defined: too many requests; `data.retryAfterMs` says when to try again. */
  RateLimited: -32011,
  /** 2026-07-28: `Mcp-Method` / `Mcp-Name` do not match the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
} as const;

export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return { code: this.code, message: this.message, ...(this.data !== undefined && { data: this.data }) };
  }
}

/** Maps engine and tool-layer errors to their JSON-RPC codes; anything else is internal. */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof TaskError) {
    switch (error.code) {
      case 'TASK_NOT_FOUND':
      case 'TASK_TERMINAL':
      case 'INVALID_CURSOR':
      case 'DUPLICATE_TASK':
        return new RpcError(ErrorCode.InvalidParams, error.message);
      case 'LISTING_UNAVAILABLE':
        return new RpcError(ErrorCode.MethodNotFound, error.message);
      case 'RUNTIME_UNAVAILABLE':
        return new RpcError(ErrorCode.InternalError, error.message);
      case 'LIMIT_EXCEEDED': {
        const { limit, value } = error as LimitExceeded;
        return new RpcError(ErrorCode.LimitExceeded, error.message, { limit, value });
      }
    }
  }
  if (error instanceof InvalidArgumentsError || error instanceof UnknownToolError) {
    return new RpcError(ErrorCode.InvalidParams, error.message);
  }
  return new RpcError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
}

/** The refusal of a request over one of the caller's limits. */
export function limitExceeded(limit: string, value: number, message: string): RpcError {
  return new RpcError(ErrorCode.LimitExceeded, message, { limit, value });
}

/** Runs an engine or tool-layer call, turning whatever it throws into the JSON-RPC error to answer with. */
export async function asRpc<T>(operation: () => T | Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toRpcError(error);
  }
}
