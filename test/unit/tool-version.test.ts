import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { QuestionDefinition } from '../../src/tools/definition.js';
import { toolVersionOf } from '../../src/tools/version.js';

const input = { type: 'object', properties: { limit: { type: 'integer' } }, required: ['limit'] } as const;
const output = { type: 'object', properties: { count: { type: 'integer' } } } as const;
const question = (schema: Record<string, unknown>): QuestionDefinition => ({
  name: 'confirm',
  schema: schema as QuestionDefinition['schema'],
  answer: z.unknown(),
});

describe('toolVersionOf', () => {
  it('is 12 hex characters of a hash, the same for the same schemas in any key order', () => {
    const version = toolVersionOf({ inputSchema: input, outputSchema: output });
    expect(version).toMatch(/^[0-9a-f]{12}$/);
    // A fresh but equal definition (another process built from the same generated code).
    const reordered = { required: ['limit'], properties: { limit: { type: 'integer' } }, type: 'object' } as const;
    expect(toolVersionOf({ inputSchema: reordered, outputSchema: { ...output } })).toBe(version);
    // sha256 of the canonical JSON `{"input":…,"output":…,"questions":[]}`, first 12 hex
    // characters: a change to the hashing itself would strand every parked task at a deploy.
    expect(version).toBe('eb8508172135');
  });

  it('changes when the input, the output or a question schema changes', () => {
    const base = toolVersionOf({ inputSchema: input, outputSchema: output, questions: [question({ type: 'object' })] });
    const widerInput = { ...input, properties: { ...input.properties, from: { type: 'integer' } } };
    expect(
      toolVersionOf({ inputSchema: widerInput, outputSchema: output, questions: [question({ type: 'object' })] }),
    ).not.toBe(base);
    expect(toolVersionOf({ inputSchema: input, questions: [question({ type: 'object' })] })).not.toBe(base);
    const otherQuestion = question({ type: 'object', properties: { ok: { type: 'boolean' } } });
    expect(toolVersionOf({ inputSchema: input, outputSchema: output, questions: [otherQuestion] })).not.toBe(base);
    expect(toolVersionOf({ inputSchema: input, outputSchema: output })).not.toBe(base);
  });

  it('is the declared version when the tool has one, whatever its schemas', () => {
    expect(toolVersionOf({ version: '3', inputSchema: input })).toBe('3');
    expect(toolVersionOf({ version: '3', inputSchema: { type: 'object' } })).toBe('3');
  });
});
