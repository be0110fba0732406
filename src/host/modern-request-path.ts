/**
 * The kept request path for stateless 2026-07-28 calls: `tools/call`, `tasks/get` and
 * `tasks/cancel` that need nothing but a JSON answer are served by the handlers of one
 * `Server` built once per process (`createKeptModernHandlers`), with a context built for each
 * request. The SDK's `createMcpHandler` builds a `Server`, a transport, an abort controller and
 * a `Response` per request, which is most of what a plain call allocates and most of what
 * outlives a young-generation collection (bench/README.md, "Tail latency"): halving it halves
 * the CPU per call and the collections that set the p99.
 *
 * The path only takes what it can check positively; everything else goes to the SDK's path,
 * which answers it (errors included) as before:
 *
 * - a POST of one JSON-RPC request (`application/json`) to a method above, which the SDK's own
 *   classifier (`classifyInboundRequest`, which also validates the `_meta` envelope) routes to
 *   protocol revision 2026-07-28;
 * - with `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` present and equal to the body's
 *   revision, method and `name` / `taskId` (the SDK's standard-header rung accepts exactly
 *   those; a mismatch, an absent header or a Base64-encoded name goes to the SDK to be refused
 *   or decoded there);
 * - that asks for nothing sent during the call: no `progressToken`, no log level (on the SDK's
 *   path either would upgrade the answer to an event stream);
 * - and is not a later round of a multi-round-trip call (`inputResponses`, `requestState`),
 *   whose material the SDK lifts and verifies.
 *
 * What the SDK does to such a request and its answer is done here the same way, and checked
 * by the raw-wire tests and the conformance scenarios on both paths: the reserved envelope keys
 * lifted out of `_meta`, `tools/call` params reduced to `name`, `arguments` and `_meta` (so a
 * legacy `params.task` is ignored), `resultType` stamped, `_meta["io.modelcontextprotocol/serverInfo"]`
 * stamped, handler errors in-band on HTTP 200 except -32021 (400), and -32002 sent as -32602.
 *
 * Security: the handlers are shared, the requests are not. Each call's principal is resolved
 * from its own `authInfo` and headers, its client address, abort signal, `_meta`, envelope and
 * declared capabilities are fields of its own context object, and nothing of one call is
 * written anywhere another call reads (test/e2e/kept-2026-path.test.ts interleaves two
 * principals' calls to prove it).
 */
import {
  type AuthInfo,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type Result,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import { JsonAnswer } from '../http/json-answer.js';
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { isPlainObject } from '../protocol/params.js';
import type { KeptModernHandlers, RequestContext } from './protocol-server.js';

/** The revision this path serves. */
const REVISION = '2026-07-28';

/** The methods the kept path takes, each with the params field its `Mcp-Name` header mirrors. */
const KEPT_METHODS: ReadonlyMap<string, 'name' | 'taskId'> = new Map([
  ['tools/call', 'name'],
  ['tasks/get', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

/** The `_meta` keys the SDK lifts into `ctx.mcpReq.envelope` (the rest stays handler material). */
const ENVELOPE_KEYS: readonly string[] = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
];

/** -32021: the one handler error the 2026-07-28 HTTP binding answers with a status (400). */
const MISSING_CLIENT_CAPABILITY = -32021;

/** -32002 (resource not found) is sent as -32602 on 2026-07-28, as the SDK's codec does. */
const RESOURCE_NOT_FOUND = -32002;

/** Who sent the request, as admission decided it from the headers. */
export interface KeptCallOrigin {
  readonly authInfo?: AuthInfo;
  /** Aborts when the client hangs up (the node server's own signal; else `request.signal`). */
  readonly hangup?: AbortSignal;
  readonly clientAddress?: string;
}

/** One request the kept path took: what its handler receives. */
interface KeptCall {
  readonly id: string | number;
  readonly method: string;
  /** `tools/call`: the request (`{ method, params }`); `tasks/*`: the params, as the SDK hands them. */
  readonly input: unknown;
  readonly meta: Record<string, unknown> | undefined;
  readonly envelope: Record<string, unknown>;
}

const NO_REQUEST_STATE: RequestContext['mcpReq']['requestState'] = () => undefined;

/** Nothing is sent during a call on this path: a call that could hear something takes the SDK's. */
const sendsNothing = async (): Promise<void> => {};

/** 2026-07-28 has no server-to-client requests; the SDK refuses them on that revision too. */
const noServerRequests = (() => {
  throw new Error('Server-to-client requests are not available on protocol revision 2026-07-28');
}) as unknown as RequestContext['mcpReq']['send'];

/**
 * Serves the stateless 2026-07-28 requests it takes (see the module comment) on kept handlers.
 * Built once per HTTP front; holds nothing of any request.
 */
export class ModernRequestPath {
  private readonly verdicts = new EnvelopeVerdicts();

  constructor(private readonly handlers: KeptModernHandlers) {}

  /**
   * The answer to `request` (its body already read and parsed), or `undefined` when the kept
   * path does not take it: the caller then hands it to the SDK's path. A JSON answer is its text
   * (`JsonAnswer`), written to the socket as it is; a web `Response` only for a client gone.
   */
  serve(request: Request, body: unknown, origin: KeptCallOrigin): Promise<JsonAnswer | Response> | undefined {
    const call = takenCall(request, body, this.verdicts);
    const handler = call && this.handlers.handler(call.method);
    if (!call || !handler) return undefined;
    return this.answer(call, handler, request, origin);
  }

  private async answer(
    call: KeptCall,
    handler: NonNullable<ReturnType<KeptModernHandlers['handler']>>,
    request: Request,
    origin: KeptCallOrigin,
  ): Promise<JsonAnswer | Response> {
    const signal = origin.hangup ?? request.signal;
    const ctx: RequestContext = {
      http: { req: request, ...(origin.authInfo && { authInfo: origin.authInfo }) },
      ...(origin.clientAddress !== undefined && { clientAddress: origin.clientAddress }),
      mcpReq: {
        id: call.id,
        method: call.method,
        ...(call.meta && { _meta: call.meta }),
        envelope: call.envelope,
        requestState: NO_REQUEST_STATE,
        signal,
        // No progress token and no log level were asked for: the SDK would send nothing either.
        notify: sendsNothing,
        log: sendsNothing,
        send: noServerRequests,
      },
    };
    let message: Record<string, unknown>;
    let status = 200;
    try {
      const result = await handler(call.input, ctx);
      const encoded = encodeResult(call.method, result, this.handlers.serverInfo);
      message = encoded
        ? { result: encoded, jsonrpc: '2.0', id: call.id }
        : rpcError(call.id, JsonRpcErrorCode.InternalError, 'Internal error');
    } catch (error) {
      const thrown = error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
      const code = Number.isSafeInteger(thrown?.code) ? (thrown?.code as number) : JsonRpcErrorCode.InternalError;
      const text = typeof thrown?.message === 'string' ? thrown.message : 'Internal error';
      message = rpcError(
        call.id,
        code === RESOURCE_NOT_FOUND ? JsonRpcErrorCode.InvalidParams : code,
        text,
        thrown?.data,
      );
      if (code === MISSING_CLIENT_CAPABILITY) status = 400;
    }
    // The client hung up: nobody is left to answer (the SDK's path answers 499 here too).
    if (signal.aborted) return new Response(null, { status: 499 });
    return JsonAnswer.of(status, message);
  }
}

/** The request as the kept path serves it, or `undefined` when it is one for the SDK's path. */
function takenCall(request: Request, body: unknown, verdicts: EnvelopeVerdicts): KeptCall | undefined {
  if (request.method.toUpperCase() !== 'POST' || !isPlainObject(body)) return undefined;
  if (!isJsonContentType(request.headers.get('content-type'))) return undefined;
  const { jsonrpc, id: rawId, method, params } = body;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || !isPlainObject(params)) return undefined;
  if (typeof rawId !== 'string' && !Number.isSafeInteger(rawId)) return undefined;
  const id = rawId as string | number;
  const nameField = KEPT_METHODS.get(method);
  const name = nameField && params[nameField];
  if (typeof name !== 'string' || name === '') return undefined;
  // The standard headers, present and equal to the body (the SDK refuses or decodes the rest).
  const headers = request.headers;
  const versionHeader = headers.get('mcp-protocol-version') ?? undefined;
  const methodHeader = headers.get('mcp-method') ?? undefined;
  const nameHeader = headers.get('mcp-name') ?? undefined;
  if (versionHeader !== REVISION || methodHeader !== method || nameHeader !== name) return undefined;
  // Multi-round-trip material is lifted and verified by the SDK.
  if ('inputResponses' in params || 'requestState' in params) return undefined;
  const rawMeta = params._meta;
  if (!isPlainObject(rawMeta) || 'progressToken' in rawMeta || LOG_LEVEL_META_KEY in rawMeta) return undefined;
  if (!isPlainObject(rawMeta[CLIENT_CAPABILITIES_META_KEY])) return undefined;
  // The SDK's classifier, which also validates the envelope, must route it to this revision
  // (asked once per distinct `_meta`; see `EnvelopeVerdicts`).
  if (!verdicts.routesHere(body, rawMeta, { versionHeader, methodHeader, nameHeader })) return undefined;
  // The SDK's lift: reserved keys to the envelope, the rest stays `_meta` (dropped when empty).
  const envelope: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rawMeta)) {
    if (ENVELOPE_KEYS.includes(key)) envelope[key] = value;
    else rest[key] = value;
  }
  const meta = Object.keys(rest).length > 0 ? rest : undefined;
  const { _meta: _envelope, ...others } = params;
  if (method === 'tools/call') {
    // The SDK's 2026-07-28 schema keeps `name`, `arguments` and `_meta` (a legacy `task` is ignored).
    const args = params.arguments;
    if (args !== undefined && !isPlainObject(args)) return undefined;
    const callParams = { name, ...(args !== undefined && { arguments: args }), ...(meta && { _meta: meta }) };
    return { id, method, input: { method, params: callParams }, meta, envelope };
  }
  // tasks/*: registered with a loose schema, so every other field reaches the handler.
  return { id, method, input: { ...others, ...(meta && { _meta: meta }) }, meta, envelope };
}

/** The top-level members a JSON-RPC request may have: the SDK's request schema is strict. */
const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);

/** How many distinct `_meta` objects keep their verdict (a client sends the same one on every call). */
const MAX_VERDICTS = 256;

/** The longest `_meta` text whose verdict is kept (see `EnvelopeVerdicts`). */
const MAX_VERDICT_KEY_CHARS = 2048;

/**
 * The SDK classifier's verdict on a request, asked once per distinct `_meta`. The classifier
 * (`classifyInboundRequest`) checks the body against zod schemas and copies it as it goes: per
 * plain call ~12 KB of garbage, and ~2 KB of it outlived young collections, the largest part of
 * what made them long (bench/README.md, "1 Dec 2026, night").
 *
 * For a request the kept path takes (a POST of one request to a kept method, headers present
 * and equal to the body's revision, method and name, checked before this), the verdict depends
 * on the body only through what is checked here on every request, exactly as the SDK's strict
 * JSON-RPC request schema does (no members beyond `jsonrpc`, `id`, `method` and `params`;
 * `jsonrpc` "2.0"; an integer or string `id`; a string `method`; object `params`, whose other
 * members that schema passes through unread), and through `params._meta`, which the envelope
 * validation and the request-meta schema read in full. So the verdict is kept per `_meta`, by
 * its JSON text, and the classifier judges every `_meta` it has not seen. Two kinds of `_meta`
 * are judged every time, never kept:
 * - a text longer than `MAX_VERDICT_KEY_CHARS` (a real envelope is a few hundred characters):
 *   kept, 256 bodies-sized keys would pin up to a GiB, and long strings of one length share a
 *   hash bucket in V8, so every lookup would compare them all;
 * - a text with `null` in it: `JSON.parse` reads `1e400` as `Infinity`, which the schemas
 *   refuse and `JSON.stringify` writes as `null`, which they may accept, so two values share
 *   that text (otherwise a value parsed from JSON and its text go together).
 */
class EnvelopeVerdicts {
  private readonly byMeta = new Map<string, boolean>();

  routesHere(
    body: Record<string, unknown>,
    meta: Record<string, unknown>,
    headers: { versionHeader: string; methodHeader: string; nameHeader: string },
  ): boolean {
    for (const member in body) if (!REQUEST_MEMBERS.has(member)) return false;
    const key = JSON.stringify(meta);
    const known = this.byMeta.get(key);
    if (known !== undefined) return known;
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: headers.versionHeader,
      mcpMethodHeader: headers.methodHeader,
      mcpNameHeader: headers.nameHeader,
      body,
    });
    const verdict =
      outcome.kind === 'modern' && outcome.messageKind === 'request' && outcome.classification.revision === REVISION;
    if (key.length > MAX_VERDICT_KEY_CHARS || key.includes('null')) return verdict;
    if (this.byMeta.size >= MAX_VERDICTS) this.byMeta.clear();
    this.byMeta.set(key, verdict);
    return verdict;
  }
}

/**
 * The SDK's 2026-07-28 result stamps for these methods: `resultType` (`complete` when absent; any
 * other value only on `tools/call`), then `_meta` serverInfo unless the handler set one.
 * `undefined` for a result the SDK would refuse to send (answered -32603 there too).
 */
function encodeResult(method: string, result: Result, serverInfo: object): Record<string, unknown> | undefined {
  const fields = result as Record<string, unknown>;
  const resultType = fields.resultType;
  if (resultType !== undefined && resultType !== 'complete' && method !== 'tools/call') return undefined;
  const stamped = resultType === undefined ? { ...fields, resultType: 'complete' } : fields;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

function rpcError(id: string | number, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined && { data }) } };
}
