/**
 * Diagnostics as data: every stage appends to a list instead of throwing, so one run reports
 * every problem. Codes are stable (`MTGnnnn`); tests and users may match on them.
 *
 * 1xxx: a type that cannot be expressed as a schema. 2xxx: a method or class the generator
 * cannot call. 3xxx: decorator arguments. 9xxx: the project itself.
 *
 * Severity `warning` is for output that is valid but probably not what was meant (an `unknown`
 * that validates nothing, a JSDoc tag the generator ignores); warnings never change the exit code.
 */

export const DiagnosticCode = {
  UnsupportedType: 'MTG1001',
  FunctionType: 'MTG1002',
  /** No longer reported: partial and mixed enums are supported since enum-member types are. */
  UnsupportedUnion: 'MTG1003',
  UnsupportedIntersection: 'MTG1004',
  NonPlainObject: 'MTG1005',
  RecursiveType: 'MTG1006',
  GenericType: 'MTG1007',
  IndexSignature: 'MTG1008',
  TupleType: 'MTG1009',
  InvalidJsDocTag: 'MTG1010',
  UnresolvedType: 'MTG1011',
  UnknownAcceptsAnything: 'MTG1012',
  UnknownJsDocTag: 'MTG1013',
  EnumNotImportable: 'MTG1014',
  MisplacedJsDoc: 'MTG1015',
  OutputNotStructured: 'MTG1016',
  TaskNotAsync: 'MTG2001',
  ClassNotExported: 'MTG2002',
  MethodNotEligible: 'MTG2003',
  ContextNotLast: 'MTG2004',
  UnnamedParameter: 'MTG2005',
  MisplacedDecorator: 'MTG2006',
  ConflictingDecorators: 'MTG2007',
  UnresolvedDecorator: 'MTG2008',
  ToolNotGenerated: 'MTG2009',
  NotStaticLiteral: 'MTG3001',
  InvalidOption: 'MTG3002',
  InvalidToolName: 'MTG3003',
  DuplicateToolName: 'MTG3004',
  InvalidQuestion: 'MTG3005',
  /**
   * A policy option of `@Task` that cannot work: a retry policy or timeout (`attempts: 0`, a
   * negative delay, an unknown backoff), or a creation policy out of its bounds (`idempotent`,
   * `priority`, `priorityFromCall`), or a `version` that is not a non-empty string.
   */
  InvalidPolicy: 'MTG3006',
  /**
   * A `ctx.callback` call the generator cannot read: a name that is not a string literal, no
   * payload type argument, a payload that is not an object, one name with two payload types, or
   * a callback in a `@Tool` method (which runs without a task).
   */
  InvalidCallback: 'MTG3007',
  ProjectLoadFailed: 'MTG9001',
} as const;

export type DiagnosticCode = (typeof DiagnosticCode)[keyof typeof DiagnosticCode];

export interface SourceLocation {
  /** Absolute path as the project sees it; formatters make it relative for display. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
  /** Source lines `line..min(endLine, line + 2)`, captured so formatting needs no file access. */
  readonly lines: readonly string[];
}

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  /** What to do about it, in one sentence. */
  readonly hint?: string;
  readonly location?: SourceLocation;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error');
}

/** Source order, so output does not depend on the order files were visited in. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort((a, b) => {
    const fileA = a.location?.file ?? '';
    const fileB = b.location?.file ?? '';
    if (fileA !== fileB) return fileA < fileB ? -1 : 1;
    const lineDelta = (a.location?.line ?? 0) - (b.location?.line ?? 0);
    if (lineDelta !== 0) return lineDelta;
    const columnDelta = (a.location?.column ?? 0) - (b.location?.column ?? 0);
    if (columnDelta !== 0) return columnDelta;
    return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
  });
}
