/**
 * Every formatting decision of the generated module lives here: quoting, indentation, line
 * breaking. Emitters describe code as a small tree (`Code`); `printCode` lays it out.
 *
 * Layout rule, applied top-down: a node goes on one line if it fits in `MAX_WIDTH` from where it
 * starts; otherwise its children go one per line, each laid out by the same rule. That is
 * deterministic and close to what Prettier/Biome produce, so the output reads naturally.
 */
import type { JsonValue } from '../ir.js';

const INDENT = '  ';
const MAX_WIDTH = 120;

export type Code =
  /** Printed verbatim: identifiers, `z.string()`-style atoms, type arguments. */
  | { readonly kind: 'raw'; readonly text: string }
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'object'; readonly entries: readonly (readonly [key: string, value: Code])[] }
  | { readonly kind: 'array'; readonly items: readonly Code[] }
  /** `callee<typeArguments>(args)`; a callee may itself be a call, which prints as a method chain. */
  | { readonly kind: 'call'; readonly callee: Code; readonly typeArguments?: string; readonly args: readonly Code[] }
  /** `object.name` */
  | { readonly kind: 'member'; readonly object: Code; readonly name: string }
  /** `(params) => body` */
  | { readonly kind: 'arrow'; readonly params: readonly string[]; readonly body: Code }
  /** Only as an object entry: `get key() { return body; }`, evaluated on first access. */
  | { readonly kind: 'getter'; readonly body: Code }
  /** `body`, whose printed text is remembered across runs (see `memo`). */
  | { readonly kind: 'memo'; readonly body: Code };

export const raw = (text: string): Code => ({ kind: 'raw', text });
export const value = (json: JsonValue): Code => ({ kind: 'value', value: json });
export const object = (entries: readonly (readonly [string, Code])[]): Code => ({ kind: 'object', entries });
export const array = (items: readonly Code[]): Code => ({ kind: 'array', items });
export const call = (callee: Code | string, args: readonly Code[] = [], typeArguments?: string): Code => ({
  kind: 'call',
  callee: typeof callee === 'string' ? raw(callee) : callee,
  args,
  ...(typeArguments !== undefined ? { typeArguments } : {}),
});
/** `receiver.name(args)`: one link of a method chain such as `z.string().optional()`. */
export const method = (receiver: Code, name: string, args: readonly Code[] = []): Code =>
  call({ kind: 'member', object: receiver, name }, args);
export const arrow = (params: readonly string[], body: Code): Code => ({ kind: 'arrow', params, body });
export const getter = (body: Code): Code => ({ kind: 'getter', body });
/**
 * A large subtree (one tool's manifest entry, one schema constant) whose layout `--watch` can
 * reuse: printed text is remembered by the subtree's content and position, so a run that changed
 * one tool lays out only that tool. Output is the same with or without the memory.
 */
export const memo = (body: Code): Code => ({ kind: 'memo', body });

/** Printed memo subtrees by position and content; bounded, since a long watch session keeps adding. */
const memoized = new Map<string, string>();
const MEMO_LIMIT = 20_000;
/**
 * Printed memo subtrees by node and position: a node `--watch` reuses from an earlier run (see
 * `EmitCache`) is found without serialising it to compute its content key.
 */
const printedNodes = new WeakMap<Code, Map<string, string>>();

function printMemo(code: Code & { kind: 'memo' }, level: number, column: number): string {
  const position = `${level}:${column}`;
  const byPosition = printedNodes.get(code) ?? new Map<string, string>();
  printedNodes.set(code, byPosition);
  const printed = byPosition.get(position);
  if (printed !== undefined) return printed;
  const key = `${position}:${JSON.stringify(code.body)}`;
  let text = memoized.get(key);
  if (text === undefined) {
    text = printCode(code.body, level, column);
    if (memoized.size >= MEMO_LIMIT) memoized.clear();
    memoized.set(key, text);
  }
  byPosition.set(position, text);
  return text;
}

/** `export const Name = <code>;` */
export function printConst(name: string, code: Code, exported = true): string {
  const prefix = `${exported ? 'export ' : ''}const ${name} = `;
  return `${prefix}${printCode(code, 0, prefix.length)};`;
}

/** Lays out `code` starting at `column` on a line indented `level` times. */
export function printCode(code: Code, level: number, column: number): string {
  if (code.kind === 'memo') return printMemo(code, level, column);
  const flat = flatWithin(code, MAX_WIDTH - column);
  if (flat !== undefined && !flat.includes('\n')) return flat;
  return printBroken(code, level, column);
}

/**
 * The flat form of `code` if it is at most `limit` characters long, else `undefined`. Stops as
 * soon as the limit is passed, so that asking "does the whole manifest fit on one line?" costs
 * 120 characters of work, not the manifest's size.
 */
function flatWithin(code: Code, limit: number): string | undefined {
  if (limit < 0) return undefined;
  const known = flatCache.get(code);
  if (known !== undefined) return known.length <= limit ? known : undefined;
  /** `open part, part close`, each part rendered within what is left of the limit. */
  const join = (parts: readonly (() => (budget: number) => string | undefined)[], open: string, close: string) => {
    let text = open;
    for (const [index, part] of parts.entries()) {
      const separator = index > 0 ? ', ' : '';
      const rendered = part()(limit - text.length - separator.length - close.length);
      if (rendered === undefined) return undefined;
      text += `${separator}${rendered}`;
    }
    text += close;
    return text.length <= limit ? text : undefined;
  };
  const item = (part: Code) => () => (budget: number) => flatWithin(part, budget);
  switch (code.kind) {
    case 'memo':
      return flatWithin(code.body, limit);
    case 'value':
      return jsonWithin(code.value, limit);
    case 'object':
      if (code.entries.length === 0) return '{}';
      return join(
        code.entries.map(([key, entry]) => () => (budget: number) => {
          const [head, tail, body] =
            entry.kind === 'getter'
              ? [`get ${propertyKey(key)}() { return `, '; }', entry.body]
              : [`${propertyKey(key)}: `, '', entry];
          const rendered = flatWithin(body, budget - head.length - tail.length);
          return rendered === undefined ? undefined : `${head}${rendered}${tail}`;
        }),
        '{ ',
        ' }',
      );
    case 'array':
      return join(code.items.map(item), '[', ']');
    case 'call': {
      const callee = flatWithin(code.callee, limit);
      if (callee === undefined) return undefined;
      const head = `${callee}${code.typeArguments !== undefined ? `<${code.typeArguments}>` : ''}`;
      const args = flatWithin({ kind: 'array', items: code.args }, limit - head.length);
      return args === undefined ? undefined : `${head}(${args.slice(1, -1)})`;
    }
    default: {
      // Atoms, members and arrows are short in practice: print them whole, then measure.
      const text = printFlat(code);
      return text.length <= limit ? text : undefined;
    }
  }
}

function jsonWithin(json: JsonValue, limit: number): string | undefined {
  if (limit < 0) return undefined;
  if (json === null || typeof json !== 'object') {
    const scalar = printScalar(json);
    return scalar.length <= limit ? scalar : undefined;
  }
  const isArray = Array.isArray(json);
  const entries: [string | undefined, JsonValue][] = isArray
    ? json.map((item) => [undefined, item])
    : Object.entries(json);
  if (entries.length === 0) return isArray ? '[]' : '{}';
  const [open, close] = isArray ? ['[', ']'] : ['{ ', ' }'];
  let text = open;
  for (const [index, [key, item]] of entries.entries()) {
    const head = `${index > 0 ? ', ' : ''}${key === undefined ? '' : `${propertyKey(key)}: `}`;
    const rendered = jsonWithin(item, limit - text.length - head.length - close.length);
    if (rendered === undefined) return undefined;
    text += `${head}${rendered}`;
  }
  text += close;
  return text.length <= limit ? text : undefined;
}

function printBroken(code: Code, level: number, column: number): string {
  const inner = INDENT.repeat(level + 1);
  const closing = INDENT.repeat(level);
  switch (code.kind) {
    case 'raw':
      return code.text;
    case 'value':
      return printBroken(valueToCode(code.value), level, column);
    case 'object': {
      if (code.entries.length === 0) return '{}';
      const lines = code.entries.map(([key, entry]) => {
        if (entry.kind === 'getter') {
          const body = `${inner}${INDENT}return `;
          return `${inner}get ${propertyKey(key)}() {\n${body}${printCode(entry.body, level + 2, body.length)};\n${inner}},`;
        }
        const head = `${inner}${propertyKey(key)}: `;
        return `${head}${printCode(entry, level + 1, head.length)},`;
      });
      return `{\n${lines.join('\n')}\n${closing}}`;
    }
    case 'array': {
      if (code.items.length === 0) return '[]';
      const lines = code.items.map((item) => `${inner}${printCode(item, level + 1, inner.length)},`);
      return `[\n${lines.join('\n')}\n${closing}]`;
    }
    case 'member': {
      const receiver = printCode(code.object, level, column);
      return `${receiver}.${code.name}`;
    }
    case 'call': {
      const callee = printCode(code.callee, level, column);
      const head = `${callee}${code.typeArguments !== undefined ? `<${code.typeArguments}>` : ''}(`;
      const headColumn = lastLineLength(head, column);
      const only = code.args[0];
      // One object/array/arrow argument hugs the parentheses: `z.object({` ... `})`.
      if (
        code.args.length === 1 &&
        only &&
        (only.kind === 'object' || only.kind === 'array' || only.kind === 'arrow' || only.kind === 'value')
      ) {
        return `${head}${printCode(only, level, headColumn)})`;
      }
      const flatArgs = flatWithin({ kind: 'array', items: code.args }, MAX_WIDTH - headColumn + 1)?.slice(1, -1);
      if (flatArgs !== undefined && headColumn + flatArgs.length + 1 <= MAX_WIDTH) return `${head}${flatArgs})`;
      const lines = code.args.map((arg) => `${inner}${printCode(arg, level + 1, inner.length)},`);
      return `${head}\n${lines.join('\n')}\n${closing})`;
    }
    case 'getter':
    case 'memo':
      return printCode(code.body, level, column);
    case 'arrow': {
      const head = `(${code.params.join(', ')}) => `;
      const body = printCode(code.body, level, column + head.length + 1);
      return `${head}${returnsObject(code) ? `(${body})` : body}`;
    }
  }
}

/** An arrow whose body starts with `{` would be read as a block: `() => ({ ... })`. */
function returnsObject(code: Code & { kind: 'arrow' }): boolean {
  const { body } = code;
  return (
    body.kind === 'object' ||
    (body.kind === 'value' && body.value !== null && typeof body.value === 'object' && !Array.isArray(body.value))
  );
}

/**
 * Layout asks for the flat form of a node at every level it visits, so each node's flat text is
 * computed once: without this, printing is quadratic in the nesting depth.
 */
const flatCache = new WeakMap<Code, string>();

export function printFlat(code: Code): string {
  let flat = flatCache.get(code);
  if (flat === undefined) {
    flat = printFlatUncached(code);
    flatCache.set(code, flat);
  }
  return flat;
}

function printFlatUncached(code: Code): string {
  switch (code.kind) {
    case 'raw':
      return code.text;
    case 'value':
      return printFlat(valueToCode(code.value));
    case 'object':
      return code.entries.length === 0
        ? '{}'
        : `{ ${code.entries.map(([key, entry]) => (entry.kind === 'getter' ? `get ${propertyKey(key)}() { return ${printFlat(entry.body)}; }` : `${propertyKey(key)}: ${printFlat(entry)}`)).join(', ')} }`;
    case 'array':
      return `[${code.items.map(printFlat).join(', ')}]`;
    case 'member':
      return `${printFlat(code.object)}.${code.name}`;
    case 'call':
      return `${printFlat(code.callee)}${code.typeArguments !== undefined ? `<${code.typeArguments}>` : ''}(${code.args.map(printFlat).join(', ')})`;
    case 'getter':
    case 'memo':
      return printFlat(code.body);
    case 'arrow': {
      const body = printFlat(code.body);
      return `(${code.params.join(', ')}) => ${returnsObject(code) ? `(${body})` : body}`;
    }
  }
}

function valueToCode(json: JsonValue): Code {
  if (Array.isArray(json)) return array(json.map(valueToCode));
  if (json !== null && typeof json === 'object')
    return object(Object.entries(json).map(([key, entry]) => [key, valueToCode(entry)] as const));
  return raw(printScalar(json));
}

function printScalar(scalar: string | number | boolean | null): string {
  if (typeof scalar === 'string') return stringLiteral(scalar);
  if (typeof scalar === 'number') {
    if (!Number.isFinite(scalar)) throw new Error(`mcp-taskgen internal error: ${scalar} is not JSON`);
    return String(scalar);
  }
  return String(scalar);
}

/** Single-quoted, with JSON's escapes for everything else (`\n`, `\\`, control characters). */
export function stringLiteral(text: string): string {
  const json = JSON.stringify(text).slice(1, -1);
  return `'${json.replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** `name`, `'my-key'`, and `['__proto__']`, which as a plain key would set the prototype instead. */
export function propertyKey(key: string): string {
  if (key === '__proto__') return `[${stringLiteral(key)}]`;
  return isIdentifier(key) ? key : stringLiteral(key);
}

/** `args.name` or `args['my-key']`. */
export function propertyAccess(receiver: string, key: string): string {
  return isIdentifier(key) ? `${receiver}.${key}` : `${receiver}[${stringLiteral(key)}]`;
}

function lastLineLength(text: string, startColumn: number): number {
  const newline = text.lastIndexOf('\n');
  return newline === -1 ? startColumn + text.length : text.length - newline - 1;
}
