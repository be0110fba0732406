/**
 * Reading command-line values: `--arg key=value` against the tool's input schema, `--answer
 * key=<json>`, `--header "Name: value"`. Every refusal is a `UsageError` naming the value.
 */
import type { QuestionAnswer } from '../../src/client/index.js';
import { UsageError } from './exit-codes.js';

const MAX_VALUE_CHARS = 1_000_000;

function splitPair(flag: string, pair: string): [string, string] {
  if (pair.length > MAX_VALUE_CHARS)
    throw new UsageError(`${flag} ${pair.slice(0, 20)}...: longer than ${MAX_VALUE_CHARS} characters`);
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag} ${pair}: expected key=value`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/**
 * The call's arguments: `--json` gives an object, each `--arg` sets one property on top. A
 * value is read by the property's schema type: strings stay as typed, numbers and booleans are
 * parsed, anything else is JSON.
 */
export function toolArguments(
  pairs: readonly string[],
  json: string | undefined,
  inputSchema: Record<string, unknown> | undefined,
): Record<string, unknown> {
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    const parsed = parseJson('--json', json);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError('--json: the arguments must be a JSON object');
    args = parsed as Record<string, unknown>;
  }
  const properties = (inputSchema?.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const pair of pairs) {
    const [key, raw] = splitPair('--arg', pair);
    args[key] = readValue(key, raw, properties[key]?.type);
  }
  return args;
}

function readValue(key: string, raw: string, type: unknown): unknown {
  switch (type) {
    case 'string':
      return raw;
    case 'number':
    case 'integer': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value) || (type === 'integer' && !Number.isInteger(value)))
        throw new UsageError(`--arg ${key}=${raw}: expected ${type === 'integer' ? 'an integer' : 'a number'}`);
      return value;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw new UsageError(`--arg ${key}=${raw}: expected true or false`);
    default:
      try {
        return JSON.parse(raw);
      } catch {
        return raw;
      }
  }
}

/** `--answer key=<json object>` (accept with that content), or `key=decline` / `key=cancel`. */
export function answers(pairs: readonly string[]): Map<string, QuestionAnswer> {
  const map = new Map<string, QuestionAnswer>();
  for (const pair of pairs) {
    const [key, raw] = splitPair('--answer', pair);
    if (raw === 'decline' || raw === 'cancel') {
      map.set(key, { action: raw });
      continue;
    }
    const content = parseJson(`--answer ${key}`, raw);
    if (typeof content !== 'object' || content === null || Array.isArray(content))
      throw new UsageError(`--answer ${key}=${raw}: expected a JSON object (the form's fields), or decline or cancel`);
    map.set(key, { action: 'accept', content: content as Record<string, unknown> });
  }
  return map;
}

/** `--header "Name: value"` (repeatable). */
export function headers(lines: readonly string[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    const name = line.slice(0, at).trim();
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError(`--header ${line}: expected "Name: value"`);
    result[name.toLowerCase()] = line.slice(at + 1).trim();
  }
  return result;
}

function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag}: not valid JSON (${(error as Error).message})`);
  }
}
