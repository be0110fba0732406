/**
 * The one JSON-RPC error class and the one table of the codes this package sends or reads.
 * It sits apart from the server and the client so that the tool layer, the protocol adapters,
 * the host and the client all spell a code the same way, and none of them imports another's
 * code to do so.
 *
 * Naming rule for error classes, here and everywhere in the package: a class is called
 * `<Subject>Error` and sets `name` to that class name; when callers branch on its kinds, it
 * carries a stable `code` from a table called `<Subject>ErrorCode` (`TaskError`/`TaskErrorCode`,
 * `TaskClientError`/`TaskClientErrorCode`, `JsonRpcError`/`JsonRpcErrorCode`). A code that
 * travels as a JSON-RPC error is a number from `JsonRpcErrorCode`, never a bare literal. A class
 * thrown to unwind on purpose rather than to report a failure (`TaskPaused`) is named for the
 * state it signals.
 *
 * `docs/guide/error-codes.md` lists each code with its message, `data` and cause; a test keeps
 * that page and this table in step.
 */

/**
 * Every JSON-RPC error code a client of this package can see. The -32700..-32600 range is
 * JSON-RPC's own; -32000 and -32001 are what the MCP SDKs' HTTP transport answers with;
 * -32010 and -32011 are this package's, and -32020/-32021 come from the 2026-07-28 revision.
 */
export const JsonRpcErrorCode = {
  /** The body is not JSON. */
  ParseError: -32700,
  /** The body is not a JSON-RPC request, or is over a size or depth bound (HTTP 413 for size). */
  InvalidRequest: -32600,
  /** No such method, or a method the negotiated revision does not have. */
  MethodNotFound: -32601,
  /** The params do not fit: unknown tool or task, arguments off the schema, a bound crossed. */
  InvalidParams: -32602,
  /** Something failed on the server side; the message says what, never a stack. */
  InternalError: -32603,
  /**
   * The Streamable HTTP transport refused the request before any method ran: a Host or Origin
   * that is not allowed (HTTP 403), a missing session header, a wrong `Accept` or `Content-Type`.
   */
  TransportError: -32000,
  /** The `Mcp-Session-Id` names no live session (HTTP 404). */
  SessionNotFound: -32001,
  /** A quota of the caller is used up; `data: { limit, value }` names it. */
  LimitExceeded: -32010,
  /** Too many requests; `data.retryAfterMs` says when to try again (HTTP 429). */
  RateLimited: -32011,
  /** 2026-07-28: the `Mcp-Method` / `Mcp-Name` headers do not match the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability the client did not declare. */
  MissingRequiredClientCapability: -32021,
  /**
   * The idempotency key of a task-augmented `tools/call` was already used, within its window,
   * by the same caller for the same tool with other arguments.
   */
  IdempotencyConflict: -32030,
} as const;

/** One of the codes in `JsonRpcErrorCode`. */
export type JsonRpcErrorCode = (typeof JsonRpcErrorCode)[keyof typeof JsonRpcErrorCode];

/**
 * A JSON-RPC error to answer a request with: `code`, `message` and optional `data`, exactly as
 * they go on the wire.
 *
 * Throw it from a tool method to fail the call with a JSON-RPC error instead of a tool result.
 * Any other error a method throws becomes a tool result with `isError: true`, which is what MCP
 * asks for so that the model can read the failure. Inside the package, the protocol adapters
 * raise it and the host hands it to the SDK as it is.
 *
 * @example
 * ```ts
 * import { JsonRpcError, JsonRpcErrorCode } from 'mcp-task-server';
 *
 * throw new JsonRpcError(JsonRpcErrorCode.InternalError, 'The upstream API rejected our credentials');
 * ```
 */
export class JsonRpcError extends Error {
  override readonly name: string = 'JsonRpcError';
  /**
   * @param code A code from `JsonRpcErrorCode`, or another integer the client and the tool agree on.
   * @param message One sentence naming the problem; clients show it as it is.
   * @param data Anything JSON can hold that helps the client act (which limit, when to retry).
   */
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** The JSON-RPC `error` member: `data` only when there is some. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return { code: this.code, message: this.message, ...(this.data !== undefined && { data: this.data }) };
  }
}
