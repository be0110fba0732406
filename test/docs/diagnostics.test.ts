/**
 * The "Diagnostics" list of the tools-and-types page has one heading with its own anchor per
 * `mcp-taskgen` code, and exactly the codes `src/generator/diagnostics.ts` defines: a new code
 * without its entry, or an entry for a code that is gone, fails here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiagnosticCode } from '../../src/generator/diagnostics.js';

const page = readFileSync(path.resolve(import.meta.dirname, '../../docs/guide/tools-and-types.md'), 'utf8');

describe('the diagnostics list of the docs', () => {
  const headings = [...page.matchAll(/^### (MTG\d{4}) \{#(mtg\d{4})\}$/gm)];

  it('has one entry per code of the generator, in order', () => {
    const codes = Object.values(DiagnosticCode);
    expect(headings.map((heading) => heading[1])).toEqual([...codes].sort());
  });

  it('gives each entry an anchor named after its code', () => {
    for (const [, code, anchor] of headings) expect(anchor).toBe(code?.toLowerCase());
  });

  it('mentions no code the generator does not define', () => {
    const mentioned = new Set(page.match(/MTG\d{4}/g));
    const known = new Set<string>(Object.values(DiagnosticCode));
    expect([...mentioned].filter((code) => !known.has(code))).toEqual([]);
  });
});
