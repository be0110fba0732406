/**
 * Reading a POST body within its bounds: the size is checked while reading (and from
 * `Content-Length` before), the nesting depth by a linear scan before `JSON.parse`, so a
 * body nested a million deep costs one pass over its bytes instead of a recursive parse. The
 * same pass tells whether a string in the body could spell a `__proto__` key.
 */
import { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';

export type BodyReading =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly response: Response };

export async function readJsonBody(
  request: Request,
  limits: { readonly maxBodyBytes: number; readonly maxJsonDepth: number },
): Promise<BodyReading> {
  const tooLarge = (): BodyReading => ({ ok: false, response: bodyTooLarge(limits.maxBodyBytes) });
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) return tooLarge();
  const text = await readText(request, limits.maxBodyBytes);
  if (text === undefined) return tooLarge();
  return parseJsonBody(text, limits);
}

/** A body read whole (within `maxBodyBytes`), parsed within `maxJsonDepth`. */
export function parseJsonBody(text: string, limits: { readonly maxJsonDepth: number }): BodyReading {
  const scan = scanJson(text, limits.maxJsonDepth);
  if (scan === 'too-deep') {
    return refuse(
      400,
      JsonRpcErrorCode.ParseError,
      `Parse error: the JSON is nested deeper than ${limits.maxJsonDepth} levels (maxJsonDepth)`,
    );
  }
  try {
    // A `__proto__` key (also spelled with `\u` escapes) parses as an own property, but code that
    // copies keys by assignment (lifting `_meta`, spreading params) would make its value the
    // copy's prototype, whose keys every later read then inherits. Dropped here, before anything
    // copies; the reviver (slower) runs only for bodies that could carry one.
    const body: unknown = scan === 'may-carry-proto' ? JSON.parse(text, withoutProtoKeys) : JSON.parse(text);
    return { ok: true, body };
  } catch (error) {
    return refuse(
      400,
      JsonRpcErrorCode.ParseError,
      `Parse error: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A `JSON.parse` reviver that leaves out every `__proto__` key. */
function withoutProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

/** The body as text, or `undefined` once it passes `maxBytes` (reading stops there). */
export async function readText(request: Request, maxBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One pass over `text`: `'too-deep'` when its arrays and objects nest deeper than `maxDepth`
 * (brackets inside strings do not count); else `'may-carry-proto'` when one of its strings holds
 * `__proto__` or a `\u` escape (which can spell it), and `'plain'` when none does. Outside strings
 * neither can stand in JSON that parses.
 */
function scanJson(text: string, maxDepth: number): 'too-deep' | 'may-carry-proto' | 'plain' {
  let depth = 0;
  let inString = false;
  let mayCarryProto = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) {
        if (text.charCodeAt(index + 1) === 0x75) mayCarryProto = true;
        index++;
      } else if (code === 0x22) {
        inString = false;
      } else if (code === 0x5f && !mayCarryProto && text.startsWith('__proto__', index)) {
        mayCarryProto = true;
      }
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > maxDepth) return 'too-deep';
    } else if (code === 0x7d || code === 0x5d) {
      depth--;
    }
  }
  return mayCarryProto ? 'may-carry-proto' : 'plain';
}

/** The refusal of a body over `maxBodyBytes`, whether its `Content-Length` or its reading said so. */
export function bodyTooLarge(maxBodyBytes: number): Response {
  return refuse(
    413,
    JsonRpcErrorCode.InvalidRequest,
    `The request body is over the ${maxBodyBytes}-byte limit (maxBodyBytes)`,
  ).response;
}

function refuse(status: number, code: number, message: string): BodyReading & { ok: false } {
  return {
    ok: false,
    response: Response.json(
      { jsonrpc: '2.0', id: null, error: { code, message } },
      { status, headers: { connection: 'close' } },
    ),
  };
}
