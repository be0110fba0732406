/**
 * `tsc --noEmit` with the JavaScript TypeScript compiler (6.x) that ts-morph bundles and
 * `mcp-taskgen` runs on: the type check of the same engine (through ts-morph, which also
 * supplies the standard library files), as a second reference next to the native TypeScript 7
 * one. Exits 1 when the project has type errors.
 *
 *     node --conditions=mcp-task-server-source --import tsx bench/generator/js-typecheck.ts <tsconfig>
 */
import { Project } from 'ts-morph';

const tsConfigFilePath = process.argv[2];
if (!tsConfigFilePath) throw new Error('usage: js-typecheck.ts <tsconfig>');
const project = new Project({ tsConfigFilePath });
const diagnostics = project.getPreEmitDiagnostics();
if (diagnostics.length > 0) {
  process.stderr.write(project.formatDiagnosticsWithColorAndContext(diagnostics));
  process.exit(1);
}
