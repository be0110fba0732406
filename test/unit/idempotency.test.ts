/** The engine's idempotency rules on their own: canonical arguments, claims, and key bounds. */
import { describe, expect, it } from 'vitest';
import {
  argumentsKey,
  canonicalJson,
  checkIdempotencyKey,
  idempotencyClaim,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  sameRequest,
} from '../../src/engine/idempotency.js';

describe('idempotency', () => {
  it('writes canonical JSON: keys sorted at every depth, arrays in order, undefined members left out', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson(['x', undefined])).toBe('["x",null]');
    expect(argumentsKey({ a: 1, b: 2 })).toBe(argumentsKey({ b: 2, a: 1 }));
    expect(argumentsKey({ a: 1 })).not.toBe(argumentsKey({ a: '1' }));
  });

  it('gives each principal, tool and key its own claim', () => {
    const claim = idempotencyClaim({ principal: 'ann' }, 'tool', 'k');
    expect(claim).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(idempotencyClaim({ principal: 'ann' }, 'tool', 'k')).toBe(claim);
    expect(idempotencyClaim({ principal: 'bob' }, 'tool', 'k')).not.toBe(claim);
    expect(idempotencyClaim({ principal: null }, 'tool', 'k')).not.toBe(claim);
    expect(idempotencyClaim({ principal: 'ann' }, 'other', 'k')).not.toBe(claim);
    // The separators keep "a" + "b\0c" and "a\0b" + "c" apart.
    expect(idempotencyClaim({ principal: 'ann' }, 'to', 'ol\0k')).not.toBe(claim);
  });

  it('compares requests by tool and canonical arguments', () => {
    expect(sameRequest({ tool: 't', args: { a: 1, b: [1, 2] } }, 't', { b: [1, 2], a: 1 })).toBe(true);
    expect(sameRequest({ tool: 't', args: { a: 1 } }, 'u', { a: 1 })).toBe(false);
    expect(sameRequest({ tool: 't', args: { b: [1, 2] } }, 't', { b: [2, 1] })).toBe(false);
  });

  it('bounds keys: 1 to 255 printable ASCII characters without spaces, naming the field', () => {
    expect(checkIdempotencyKey('order-17:retry/2', 'the key')).toBe('order-17:retry/2');
    expect(checkIdempotencyKey('k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH), 'the key')).toHaveLength(255);
    for (const bad of ['', 'k'.repeat(256), 7, null]) {
      expect(() => checkIdempotencyKey(bad, 'the key')).toThrow(/^the key must be a string of 1 to 255 characters$/);
    }
    for (const bad of ['a b', 'tab\there', 'é']) {
      expect(() => checkIdempotencyKey(bad, 'the key')).toThrow(/the key may only hold printable ASCII/);
    }
  });
});
