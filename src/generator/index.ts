/**
 * Programmatic API of `mcp-taskgen`; the CLI and the tests use exactly this code path.
 *
 *     tsconfig ──readProject──▶ ManifestIR ──emitTaskModule──▶ file map ──write / check──▶ disk
 *
 * Generation never touches the disk; `writeGenerated` and `checkGenerated` do, and nothing else.
 */
import path from 'node:path';
import { globMatcher } from './config.js';
import { type Diagnostic, hasErrors } from './diagnostics.js';
import { emitClientModule } from './emit/client.js';
import { emitTaskModule } from './emit/module.js';
import type { FileMap } from './files.js';
import type { ManifestIR } from './ir.js';
import { readProject } from './reader/read-project.js';

export type { LoadedConfig, TaskgenConfig } from './config.js';
export { globMatcher, loadConfig } from './config.js';
export type { Diagnostic, DiagnosticCode, Severity, SourceLocation } from './diagnostics.js';
export { hasErrors } from './diagnostics.js';
export { emitClientModule } from './emit/client.js';
export { emitTaskModule, relativeImport } from './emit/module.js';
export { emitTypeCheckModule } from './emit/type-check.js';
export type { CheckResult, CheckStatus, FileMap, WriteResult, WriteStatus } from './files.js';
export { checkGenerated, extraGenerated, writeGenerated } from './files.js';
export { diagnosticCount, formatDiagnostic, formatDiagnostics } from './format-diagnostics.js';
export { isGeneratedByTaskgen } from './header.js';
export type * from './ir.js';
export { ProjectSession, readProject } from './reader/read-project.js';
export type { WatchCycle, WatchHandle, WatchOptions } from './watch.js';
export { watchProject } from './watch.js';

export const DEFAULT_TSCONFIG = 'tsconfig.json';
export const DEFAULT_OUT = 'src/__generated__/tasks.generated.ts';

export interface GenerateOptions {
  /** The project's tsconfig.json. Default: `tsconfig.json`. */
  readonly tsconfig?: string;
  /** The module to generate. Default: `src/__generated__/tasks.generated.ts`. */
  readonly out?: string;
  /** Globs (relative to `cwd`) of the tsconfig's files to scan for decorators. Default: all of them. */
  readonly include?: readonly string[];
  /** Base for relative `tsconfig`, `out` and `include`. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** Also write a typed client module for these tools here (`emit/client.ts`). */
  readonly client?: string;
}

export interface GenerateResult {
  /** Absolute path → content; empty when there are errors, so nothing half-right gets written. */
  readonly files: FileMap;
  readonly diagnostics: readonly Diagnostic[];
  readonly ir: ManifestIR;
}

export function generate(options: GenerateOptions = {}): GenerateResult {
  const cwd = options.cwd ?? process.cwd();
  const tsconfig = path.resolve(cwd, options.tsconfig ?? DEFAULT_TSCONFIG);
  const out = path.resolve(cwd, options.out ?? DEFAULT_OUT);
  const include = options.include && globMatcher(options.include.map((glob) => path.resolve(cwd, glob)));
  const client = options.client !== undefined ? path.resolve(cwd, options.client) : undefined;
  const { ir, diagnostics } = readProject({
    tsconfig,
    exclude: client ? [out, client] : [out],
    ...(include ? { include } : {}),
  });
  if (hasErrors(diagnostics)) return { files: new Map(), diagnostics, ir };
  return {
    files: new Map([
      [out, emitTaskModule(ir, { projectDir: path.dirname(tsconfig), outFile: out })],
      ...(client ? [[client, emitClientModule(ir)] as const] : []),
    ]),
    diagnostics,
    ir,
  };
}
