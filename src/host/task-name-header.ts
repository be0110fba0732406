/**
 * The lenient reading of `Mcp-Name` on `tasks/*` (opt-in, `http.allowMissingMcpName`). The
 * 2026-07-28 HTTP binding makes the header a client MUST and the SDK refuses a request without
 * it (-32020), but clients in use omit it on `tasks/get`, `tasks/update` and `tasks/cancel`
 * (FastMCP's Python client; the MCP Inspector's tracker reports the same). When allowed, a
 * missing header is filled in from the body's `taskId` before the SDK checks it; a header that
 * is present and does not match is still refused, by the SDK, as before.
 */
import { isPlainObject } from '../protocol/params.js';

const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** `request` with `Mcp-Name` filled in from its body (already read and parsed), when allowed. */
export function fillMissingTaskName(request: Request, body: unknown): Request {
  if (request.method !== 'POST' || request.headers.has('mcp-name')) return request;
  const method = request.headers.get('mcp-method')?.trim();
  if (!method || !TASK_METHODS.has(method)) return request;
  if (!isPlainObject(body) || body.method !== method || !isPlainObject(body.params)) return request;
  const taskId = body.params.taskId;
  // Anything unusual (no id, a batch, a different method) is left for the SDK to refuse.
  if (typeof taskId !== 'string' || taskId === '' || !/^[\x21-\x7e]+$/.test(taskId)) return request;
  const headers = new Headers(request.headers);
  headers.set('mcp-name', taskId);
  // The body was read once by the front and travels parsed, so the copy carries none.
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}
