/**
 * Turns "this node is wrong" into a located `Diagnostic`. The only place that converts ts-morph
 * positions into the plain `SourceLocation` the rest of the generator works with.
 */
import path from 'node:path';
import { Node, type SourceFile } from 'ts-morph';
import type { Diagnostic, DiagnosticCode, Severity, SourceLocation } from '../diagnostics.js';

const MAX_FRAME_LINES = 3;

/** A span that is not a ts-morph node of its own, such as a JSDoc tag. */
export interface TextRange {
  readonly sourceFile: SourceFile;
  readonly start: number;
  readonly end: number;
}

export class DiagnosticSink {
  readonly diagnostics: Diagnostic[] = [];
  // A named type used by two tools is read once, but guard anyway: one problem, one report.
  private readonly seen = new Set<string>();

  /**
   * Errors reported so far, repeats included: a problem in a type two tools share is one
   * diagnostic, but it explains why each of them failed.
   */
  errorCount = 0;

  /** `at` may be a location captured earlier, for a node of a program that has since changed. */
  error(code: DiagnosticCode, at: Node | TextRange | SourceLocation, message: string, hint?: string): void {
    this.errorCount++;
    this.report('error', code, at, message, hint);
  }

  /** Diagnostics gathered elsewhere, deduplicated against these. */
  add(diagnostics: readonly Diagnostic[]): void {
    for (const diagnostic of diagnostics) {
      const key = keyOf(diagnostic.code, diagnostic.location, diagnostic.message);
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.diagnostics.push(diagnostic);
    }
  }

  warning(code: DiagnosticCode, node: Node | TextRange, message: string, hint?: string): void {
    this.report('warning', code, node, message, hint);
  }

  private report(
    severity: Severity,
    code: DiagnosticCode,
    at: Node | TextRange | SourceLocation,
    message: string,
    hint?: string,
  ) {
    const location = isSourceLocation(at) ? at : locate(at);
    const key = keyOf(code, location, message);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.diagnostics.push({ code, severity, message, ...(hint ? { hint } : {}), location });
  }
}

function keyOf(code: DiagnosticCode, location: SourceLocation | undefined, message: string): string {
  return `${code}@${location?.file}:${location?.line}:${location?.column}:${message}`;
}

function isSourceLocation(target: Node | TextRange | SourceLocation): target is SourceLocation {
  return !Node.isNode(target) && 'lines' in target;
}

export function locate(target: Node | TextRange): SourceLocation {
  const range = isTextRange(target)
    ? target
    : { sourceFile: target.getSourceFile(), start: target.getStart(), end: target.getEnd() };
  const { sourceFile } = range;
  const start = sourceFile.getLineAndColumnAtPos(range.start);
  const end = sourceFile.getLineAndColumnAtPos(range.end);
  const allLines = sourceFile.getFullText().split(/\r?\n/);
  const lastFrameLine = Math.min(end.line, start.line + MAX_FRAME_LINES - 1);
  return {
    file: sourceFile.getFilePath(),
    line: start.line,
    column: start.column,
    endLine: end.line,
    endColumn: end.column,
    lines: allLines.slice(start.line - 1, lastFrameLine),
  };
}

/** `src/reports.ts:14:9`, relative to the tsconfig directory: stable across machines. */
export function sourceReference(node: Node, rootDir: string): string {
  const { line, column } = node.getSourceFile().getLineAndColumnAtPos(node.getStart());
  return `${relativeModulePath(node.getSourceFile(), rootDir)}:${line}:${column}`;
}

export function relativeModulePath(sourceFile: SourceFile, rootDir: string): string {
  return path.posix.relative(toPosix(rootDir), toPosix(sourceFile.getFilePath()));
}

function isTextRange(target: Node | TextRange): target is TextRange {
  return !Node.isNode(target);
}

function toPosix(filePath: string): string {
  return filePath.split(path.sep).join('/');
}
