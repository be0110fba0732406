/**
 * Programmatic API of `mcp-taskgen`; the CLI and the tests use exactly this code path.
 *
 *     tsconfig ──readProject──▶ ManifestIR ──emitTaskModule──▶ file map ──write / check──▶ disk
 *
 * Generation never touches the disk; `writeGenerated` and `checkGenerated` do, and nothing else.
 */
import path from 'node:path';
import { type Diagnostic, hasErrors } from './diagnostics.js';
import { emitTaskModule } from './emit/module.js';
import type { FileMap } from './files.js';
import type { ManifestIR } from './ir.js';
import { readProject } from './reader/read-project.js';

export type { Diagnostic, DiagnosticCode, SourceLocation } from './diagnostics.js';
export { hasErrors } from './diagnostics.js';
export { emitTaskModule, relativeImport } from './emit/module.js';
export { emitTypeCheckModule } from './emit/type-check.js';
export type { CheckResult, CheckStatus, FileMap, WriteResult, WriteStatus } from './files.js';
export { checkGenerated, writeGenerated } from './files.js';
export { formatDiagnostic, formatDiagnostics } from './format-diagnostics.js';
export { isGeneratedByTaskgen } from './header.js';
export type * from './ir.js';
export { readProject } from './reader/read-project.js';

export const DEFAULT_TSCONFIG = 'tsconfig.json';
export const DEFAULT_OUT = 'src/__generated__/tasks.generated.ts';

export interface GenerateOptions {
  /** The project's tsconfig.json. Default: `tsconfig.json`. */
  readonly tsconfig?: string;
  /** The module to generate. Default: `src/__generated__/tasks.generated.ts`. */
  readonly out?: string;
  /** Base for relative `tsconfig` and `out`. Default: `process.cwd()`. */
  readonly cwd?: string;
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
  const { ir, diagnostics } = readProject({ tsconfig, exclude: [out] });
  if (hasErrors(diagnostics)) return { files: new Map(), diagnostics, ir };
  return {
    files: new Map([[out, emitTaskModule(ir, { projectDir: path.dirname(tsconfig), outFile: out })]]),
    diagnostics,
    ir,
  };
}
