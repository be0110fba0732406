/**
 * Renders diagnostics the way `tsc --pretty false` users expect them, with our own code prefix:
 *
 *     src/svc.ts:3:17 - error MTG1002: ...
 *
 *     3   resize(input: () => void) {}
 *                       ~~~~~~~~~~
 *       hint: ...
 *
 * TypeScript's formatter hard-codes the `TS` prefix, hence this small copy of its layout.
 */
import path from 'node:path';
import type { Diagnostic, SourceLocation } from './diagnostics.js';

export interface FormatOptions {
  /** Paths are shown relative to this directory. */
  readonly cwd: string;
}

export function formatDiagnostics(diagnostics: readonly Diagnostic[], options: FormatOptions): string {
  const blocks = diagnostics.map((diagnostic) => formatDiagnostic(diagnostic, options));
  blocks.push(diagnosticCount(diagnostics));
  return `${blocks.join('\n\n')}\n`;
}

/** `Found 2 errors and 1 warning.`, `Found 2 errors.`, `Found 1 warning.` */
export function diagnosticCount(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  if (warnings === 0) return `Found ${plural(errors, 'error')}.`;
  if (errors === 0) return `Found ${plural(warnings, 'warning')}.`;
  return `Found ${plural(errors, 'error')} and ${plural(warnings, 'warning')}.`;
}

export function formatDiagnostic(diagnostic: Diagnostic, options: FormatOptions): string {
  const { location } = diagnostic;
  const where = location ? `${displayPath(location.file, options.cwd)}:${location.line}:${location.column} - ` : '';
  const lines = [`${where}${diagnostic.severity} ${diagnostic.code}: ${diagnostic.message}`];
  if (location && location.lines.length > 0) lines.push('', ...codeFrame(location));
  if (diagnostic.hint) lines.push(`  hint: ${diagnostic.hint}`);
  return lines.join('\n');
}

function displayPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative.split(path.sep).join('/');
}

function codeFrame(location: SourceLocation): string[] {
  const lastLine = location.line + location.lines.length - 1;
  const gutterWidth = String(lastLine).length;
  const frame: string[] = [];
  location.lines.forEach((rawText, index) => {
    const lineNumber = location.line + index;
    // Tabs become one space so that the underline's columns match the text's.
    const text = rawText.replace(/\t/g, ' ');
    const from = lineNumber === location.line ? location.column - 1 : firstNonBlank(text);
    const to = lineNumber === location.endLine ? location.endColumn - 1 : text.length;
    frame.push(`${String(lineNumber).padStart(gutterWidth)} ${text}`.trimEnd());
    frame.push(`${' '.repeat(gutterWidth)} ${' '.repeat(from)}${'~'.repeat(Math.max(1, to - from))}`);
  });
  return frame;
}

function firstNonBlank(text: string): number {
  const index = text.search(/\S/);
  return index === -1 ? 0 : index;
}
