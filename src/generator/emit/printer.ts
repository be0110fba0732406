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
  | { readonly kind: 'arrow'; readonly params: readonly string[]; readonly body: Code };

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

/** `export const Name = <code>;` */
export function printConst(name: string, code: Code, exported = true): string {
  const prefix = `${exported ? 'export ' : ''}const ${name} = `;
  return `${prefix}${printCode(code, 0, prefix.length)};`;
}

/** Lays out `code` starting at `column` on a line indented `level` times. */
export function printCode(code: Code, level: number, column: number): string {
  const flat = printFlat(code);
  if (column + flat.length <= MAX_WIDTH && !flat.includes('\n')) return flat;
  return printBroken(code, level, column);
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
      const flatArgs = code.args.map(printFlat).join(', ');
      if (headColumn + flatArgs.length + 1 <= MAX_WIDTH) return `${head}${flatArgs})`;
      const lines = code.args.map((arg) => `${inner}${printCode(arg, level + 1, inner.length)},`);
      return `${head}\n${lines.join('\n')}\n${closing})`;
    }
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

function printFlat(code: Code): string {
  switch (code.kind) {
    case 'raw':
      return code.text;
    case 'value':
      return printFlat(valueToCode(code.value));
    case 'object':
      return code.entries.length === 0
        ? '{}'
        : `{ ${code.entries.map(([key, entry]) => `${propertyKey(key)}: ${printFlat(entry)}`).join(', ')} }`;
    case 'array':
      return `[${code.items.map(printFlat).join(', ')}]`;
    case 'member':
      return `${printFlat(code.object)}.${code.name}`;
    case 'call':
      return `${printFlat(code.callee)}${code.typeArguments !== undefined ? `<${code.typeArguments}>` : ''}(${code.args.map(printFlat).join(', ')})`;
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
