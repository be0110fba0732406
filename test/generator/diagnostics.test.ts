/**
 * Every unsupported construct in the `unsupported` fixture is marked with the diagnostic it must
 * produce (`// expect: MTGnnnn text`); the reader must report exactly those, at those columns.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Diagnostic,
  formatDiagnostic,
  formatDiagnostics,
  type GenerateResult,
  generate,
} from '../../src/generator/index.js';
import { expectedDiagnostics, FIXTURES, fixtureTsconfig } from './helpers.js';

const PROJECT_DIR = path.join(FIXTURES, 'unsupported');

let result: GenerateResult;

beforeAll(() => {
  result = generate({
    tsconfig: fixtureTsconfig('unsupported'),
    out: path.join(PROJECT_DIR, 'src/__generated__/tasks.generated.ts'),
  });
});

function located(diagnostic: Diagnostic) {
  const location = diagnostic.location;
  return {
    file: location ? path.relative(PROJECT_DIR, location.file).split(path.sep).join('/') : '(none)',
    line: location?.line ?? 0,
    column: location?.column ?? 0,
    code: diagnostic.code,
  };
}

describe('diagnostics for unsupported constructs', () => {
  it('reports exactly the marked problems, each with its code, line and column', () => {
    const expected = expectedDiagnostics('unsupported');
    expect(expected.length).toBeGreaterThan(40);
    const byPosition = (a: { file: string; line: number; column: number }, b: typeof a) =>
      a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column;
    expect(result.diagnostics.map(located).sort(byPosition)).toEqual([...expected].sort(byPosition));
  });

  it('gives every diagnostic a severity, a message naming its subject, a hint and a code frame', () => {
    const warningCodes = new Set(['MTG1012', 'MTG1013', 'MTG1015', 'MTG1016']);
    for (const diagnostic of result.diagnostics) {
      expect(diagnostic.severity).toBe(warningCodes.has(diagnostic.code) ? 'warning' : 'error');
      expect(diagnostic.hint).toMatch(/\S/);
      expect(diagnostic.location?.lines.length).toBeGreaterThan(0);
    }
  });

  it('writes nothing when there are errors', () => {
    expect(result.files.size).toBe(0);
  });

  it('ignores a decorator that is only named like ours', () => {
    expect(result.diagnostics.filter((diagnostic) => diagnostic.location?.file.endsWith('lookalike.ts'))).toEqual([]);
    expect(result.ir.tools.map((tool) => tool.target.exportName)).not.toContain('Lookalike');
  });

  it('formats a diagnostic as file:line:col, code, message, underlined frame and hint', () => {
    const diagnostic = result.diagnostics.find(
      (candidate) => candidate.code === 'MTG1005' && candidate.message.includes('mapInput'),
    );
    expect(diagnostic).toBeDefined();
    expect(formatDiagnostic(diagnostic as Diagnostic, { cwd: PROJECT_DIR })).toMatchInlineSnapshot(`
      "src/unsupported.ts:40:27 - error MTG1005: parameter 'entries' of Unsupported.mapInput: 'Map' is not plain JSON data

      40   async mapInput(entries: Map<string, number>): Promise<void> {} // expect: MTG1005 Map<string, number>
                                   ~~~~~~~~~~~~~~~~~~~
        hint: Use Record<string, V>, or an array of { key, value } objects."
    `);
  });

  it('formats a warning with its location, and ends the report with the counts', () => {
    const warning = result.diagnostics.find((candidate) => candidate.code === 'MTG1013');
    expect(formatDiagnostic(warning as Diagnostic, { cwd: PROJECT_DIR }).split('\n')[0]).toMatch(
      /^src\/\w+\.ts:\d+:\d+ - warning MTG1013: .*ignores the JSDoc tag @/,
    );
    const warnings = result.diagnostics.filter((diagnostic) => diagnostic.severity === 'warning').length;
    const errors = result.diagnostics.length - warnings;
    expect(warnings).toBe(3);
    const text = formatDiagnostics(result.diagnostics, { cwd: PROJECT_DIR });
    expect(text.endsWith(`\n\nFound ${errors} errors and ${warnings} warnings.\n`)).toBe(true);
  });

  it('reports a missing tsconfig as a project diagnostic, not an exception', () => {
    const missing = generate({ tsconfig: path.join(FIXTURES, 'does-not-exist/tsconfig.json') });
    expect(missing.diagnostics.map((diagnostic) => diagnostic.code)).toEqual(['MTG9001']);
    expect(missing.files.size).toBe(0);
  });
});
