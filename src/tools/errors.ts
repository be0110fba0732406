/**
 * Throw a `JsonRpcError` from a tool method to fail the call with a JSON-RPC error instead of
 * a tool result. Any other error becomes a tool result with `isError: true`, which is what
 * MCP asks for so the model can read the failure.
 *
 * @example
 * ```ts
 * throw new JsonRpcError(-32603, 'The upstream API rejected our credentials');
 * ```
 */
export class JsonRpcError extends Error {
  override readonly name = 'JsonRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Raised when a manifest and the loaded classes disagree, before the server accepts traffic. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}
