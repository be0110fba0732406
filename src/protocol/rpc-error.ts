/**
 * How engine and tool-layer errors become JSON-RPC errors. The adapters raise `JsonRpcError`
 * and the host turns it into the SDK's error type, which keeps the adapters free of SDK imports
 * and easy to test.
 */
import { type LimitExceededError, TaskError } from '../engine/errors.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { InvalidArgumentsError, UnknownToolError } from '../tools/registry.js';

/** Maps engine and tool-layer errors to their JSON-RPC codes; anything else is internal. */
export function toJsonRpcError(error: unknown): JsonRpcError {
  if (error instanceof JsonRpcError) return error;
  if (error instanceof TaskError) {
    switch (error.code) {
      case 'TASK_NOT_FOUND':
      case 'TASK_TERMINAL':
      case 'INVALID_CURSOR':
      case 'DUPLICATE_TASK':
      case 'INVALID_IDEMPOTENCY_KEY':
      case 'INVALID_PRIORITY':
        return new JsonRpcError(JsonRpcErrorCode.InvalidParams, error.message);
      case 'LISTING_UNAVAILABLE':
        return new JsonRpcError(JsonRpcErrorCode.MethodNotFound, error.message);
      case 'RUNTIME_UNAVAILABLE':
        return new JsonRpcError(JsonRpcErrorCode.InternalError, error.message);
      case 'IDEMPOTENCY_CONFLICT':
        return new JsonRpcError(JsonRpcErrorCode.IdempotencyConflict, error.message);
      case 'LIMIT_EXCEEDED': {
        const { limit, value } = error as LimitExceededError;
        return new JsonRpcError(JsonRpcErrorCode.LimitExceeded, error.message, { limit, value });
      }
    }
  }
  if (error instanceof InvalidArgumentsError || error instanceof UnknownToolError) {
    return new JsonRpcError(JsonRpcErrorCode.InvalidParams, error.message);
  }
  return new JsonRpcError(JsonRpcErrorCode.InternalError, error instanceof Error ? error.message : String(error));
}

/** The refusal of a request over one of the caller's limits. */
export function limitExceeded(limit: string, value: number, message: string): JsonRpcError {
  return new JsonRpcError(JsonRpcErrorCode.LimitExceeded, message, { limit, value });
}

/** Runs an engine or tool-layer call, turning whatever it throws into the JSON-RPC error to answer with. */
export async function asRpc<T>(operation: () => T | Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toJsonRpcError(error);
  }
}
