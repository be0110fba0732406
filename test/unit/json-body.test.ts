/**
 * Parsing a request body: a `__proto__` key never reaches the parsed body, however it is
 * spelled, so no copy of the body made by assignment can get a prototype from a client.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/http/json-body.js';

const limits = { maxJsonDepth: 32 };

function parsed(text: string): Record<string, unknown> {
  const reading = parseJsonBody(text, limits);
  if (!reading.ok) throw new Error('refused');
  return reading.body as Record<string, unknown>;
}

describe('parseJsonBody', () => {
  it('drops __proto__ keys, plain or escaped, at any depth, and keeps every other key', () => {
    for (const text of [
      '{"params":{"_meta":{"__proto__":{"idempotencyKey":"x"},"a":1}}}',
      '{"params":{"_meta":{"\\u005f_proto__":{"idempotencyKey":"x"},"a":1}}}',
      '{"params":{"_meta":{"__pr\\u006fto__":{"idempotencyKey":"x"},"a":1}}}',
      // After strings that end in an escaped backslash or quote (the key is still a string).
      '{"params":{"_meta":{"b":"\\\\","__proto__":{"idempotencyKey":"x"},"a":1}}}',
      '{"params":{"_meta":{"b":"\\"","__proto__":{"idempotencyKey":"x"},"a":1}}}',
      '{"params":{"_meta":{"\\u005F\\u005Fproto\\u005F\\u005F":{"idempotencyKey":"x"},"a":1}}}',
    ]) {
      const meta = (parsed(text).params as { _meta: Record<string, unknown> })._meta;
      expect(Object.hasOwn(meta, '__proto__'), text).toBe(false);
      // What a copy by assignment, as the lifting of `_meta` does, would inherit.
      const copy: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(meta)) copy[key] = value;
      expect(copy.idempotencyKey, text).toBeUndefined();
      expect(meta.a).toBe(1);
    }
  });

  it('parses bodies without such a key as JSON.parse does, escapes included', () => {
    const text = '{"name":"caf\\u00e9","args":{"proto":"__x__","list":[1,{"b":null}]}}';
    expect(parsed(text)).toEqual(JSON.parse(text));
    // An escaped backslash before a `u` is no `\u` escape.
    const backslashed = '{"path":"C:\\\\users","__proto_":1}';
    expect(parsed(backslashed)).toEqual(JSON.parse(backslashed));
  });
});
