/** Reading request params defensively: the adapters must not trust the SDK to have checked them. */
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';

export type Params = Readonly<Record<string, unknown>> | undefined;

export function requireTaskId(params: Params): string {
  const taskId = params?.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0) {
    throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, 'params.taskId must be a non-empty string');
  }
  return taskId;
}

export function optionalCursor(params: Params): string | undefined {
  const cursor = params?.cursor;
  if (cursor === undefined) return undefined;
  if (typeof cursor !== 'string')
    throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, 'params.cursor must be a string');
  return cursor;
}

export function toolName(params: Params): string {
  const name = params?.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, 'params.name must be a non-empty string');
  }
  return name;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `_meta` key a task-augmented `tools/call` carries its idempotency key under. */
export const IDEMPOTENCY_KEY_META_KEY = 'mcp-task-server/idempotencyKey';

/**
 * The idempotency key of a call, unchecked (the engine bounds it): `_meta`'s, else the one the
 * host read from the `Idempotency-Key` header.
 */
export function idempotencyKeyOf(params: Params, headerKey: string | undefined): unknown {
  const meta = params?._meta;
  if (isPlainObject(meta) && meta[IDEMPOTENCY_KEY_META_KEY] !== undefined) return meta[IDEMPOTENCY_KEY_META_KEY];
  return headerKey;
}

/** The `_meta` key a task-augmented `tools/call` carries its own priority under. */
export const PRIORITY_META_KEY = 'mcp-task-server/priority';

/** The priority a call asks for in `_meta`, unchecked (the engine bounds it), if any. */
export function requestedPriorityOf(params: Params): unknown {
  const meta = params?._meta;
  return isPlainObject(meta) ? meta[PRIORITY_META_KEY] : undefined;
}
