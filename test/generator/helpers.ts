/**
 * Shared by the generator tests: fixture paths, scratch directories, running `tsc`, loading a
 * fixture's generated module to call its tools, and waiting for `--watch` runs.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { emitTaskModule, emitTypeCheckModule, type ManifestIR, type WatchCycle } from '../../src/generator/index.js';
import type { TaskContext, TaskManifest } from '../../src/index.js';
import type { TaskToolDefinition } from '../../src/manifest/index.js';
import { toCallToolResult } from '../../src/tools/result.js';

export const GENERATOR_TESTS = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(GENERATOR_TESTS, '../..');
export const FIXTURES = path.join(GENERATOR_TESTS, 'fixtures');

export function fixtureTsconfig(name: string): string {
  return path.join(FIXTURES, name, 'tsconfig.json');
}

/**
 * A fresh directory under test/generator/.tmp (git-ignored through `.tmp/`). It must live inside
 * the package so that `mcp-task-server` and `zod` resolve from it as they do for fixtures.
 */
export function scratchDir(label: string): string {
  const parent = path.join(GENERATOR_TESTS, '.tmp');
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(path.join(parent, `${label}-`));
}

/**
 * Copies a fixture into a scratch directory at the same depth as test/generator/fixtures/<name>,
 * so that its relative imports of the package's sources still resolve.
 */
export function copyFixture(name: string): string {
  const copy = scratchDir(name);
  cpSync(path.join(FIXTURES, name), copy, { recursive: true, filter: (source) => !source.includes('__generated__') });
  return copy;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface TscResult {
  readonly exitCode: number;
  readonly output: string;
}

/**
 * For tests that run `tsc` or read a whole fixture: on 2 cores shared with other suites either can
 * take 20 s, which is vitest's default here, without anything being wrong.
 */
export const TSC_TIMEOUT_MS = 120_000;

/** Runs the repository's TypeScript 7 `tsc --noEmit -p <tsconfig>`. */
export function runTsc(tsconfig: string): TscResult {
  const tsc = path.join(REPO_ROOT, 'node_modules/.bin/tsc');
  const result = spawnSync(tsc, ['--noEmit', '--pretty', 'false', '-p', tsconfig], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  return { exitCode: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

export interface ExpectedDiagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly code: string;
}

/**
 * Reads `// expect: MTGnnnn text` markers from a fixture's sources: a diagnostic with that code
 * must start on that line, at the first occurrence of `text` on it.
 */
export function expectedDiagnostics(fixture: string): ExpectedDiagnostic[] {
  const root = path.join(FIXTURES, fixture);
  const expected: ExpectedDiagnostic[] = [];
  for (const file of listFiles(path.join(root, 'src'))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, index) => {
      const marker = /\/\/ expect: (MTG\d{4}) (.+)$/.exec(text);
      if (!marker?.[1] || !marker[2]) return;
      const column = text.indexOf(marker[2]);
      expected.push({
        file: path.relative(root, file).split(path.sep).join('/'),
        line: index + 1,
        column: column + 1,
        code: marker[1],
      });
    });
  }
  return expected;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? listFiles(full) : [full];
  });
}

/**
 * Writes `moduleText` and the type-check module for `ir` into `dir`, with a tsconfig that extends
 * the fixture's, and returns that tsconfig: compiling it proves the schemas match the source types.
 */
export function writeTypeCheckProject(ir: ManifestIR, fixtureDir: string, dir: string, moduleText: string): string {
  const out = path.join(dir, 'tasks.generated.ts');
  const checkFile = path.join(dir, 'type-check.ts');
  writeFileSync(out, moduleText);
  writeFileSync(checkFile, emitTypeCheckModule(ir, { projectDir: fixtureDir, checkFile, generatedFile: out }));
  const tsconfig = path.join(dir, 'tsconfig.json');
  const base = path.relative(dir, path.join(fixtureDir, 'tsconfig.json')).split(path.sep).join('/');
  writeFileSync(tsconfig, JSON.stringify({ extends: base, include: ['*.ts'] }, null, 2));
  return tsconfig;
}

// ajv-formats is CommonJS with a default export; under NodeNext its namespace carries it.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * ajv for generated schemas: strict, with OpenAPI's `discriminator` keyword switched on, except
 * `strictTuples`: it flags every tuple with a rest element (`[string, ...number[]]`) because such
 * a tuple has no maximum length, which is the point of a rest element.
 */
export function strictAjv(): Ajv2020 {
  return addFormats(new Ajv2020({ strict: true, strictTuples: false, discriminator: true }));
}

/** A fixture's generated module, imported, with an instance of the class its tools run on. */
export interface GeneratedFixture {
  readonly manifest: TaskManifest;
  /** The tool named `name`; throws when the manifest has none. */
  readonly tool: (name: string) => TaskToolDefinition;
  /** Calls a tool as the runtime does: parse the arguments, invoke the method, shape the result. */
  readonly call: (name: string, args: unknown) => Promise<ReturnType<typeof toCallToolResult>>;
}

/**
 * Emits `ir`, read from the fixture `fixture`, into `<scratch>/runtime`, imports it and makes an
 * instance of `className`, exported by the fixture's `classModule`.
 */
export async function loadGeneratedFixture(
  fixture: string,
  ir: ManifestIR,
  scratch: string,
  { classModule, className }: { readonly classModule: string; readonly className: string },
): Promise<GeneratedFixture> {
  const projectDir = path.join(FIXTURES, fixture);
  const dir = path.join(scratch, 'runtime');
  mkdirSync(dir);
  const out = path.join(dir, 'tasks.generated.ts');
  writeFileSync(out, emitTaskModule(ir, { projectDir, outFile: out }));
  const { taskManifest: manifest } = (await import(out)) as { taskManifest: TaskManifest };
  const exported = (await import(path.join(projectDir, classModule))) as Record<string, new () => object>;
  const Target = exported[className];
  if (!Target) throw new Error(`${fixture}/${classModule} does not export ${className}`);
  const target = new Target();
  const tool = (name: string): TaskToolDefinition => {
    const found = manifest.tools.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  const call = async (name: string, args: unknown) => {
    const definition = tool(name);
    const ctx = { progress: () => {} } as unknown as TaskContext;
    return toCallToolResult(definition, await definition.invoke(target, definition.input.parse(args), ctx));
  };
  return { manifest, tool, call };
}

/**
 * Resolves with `--watch` run number `index` (0 is the initial run) as `onCycle` collects them in
 * `cycles`; rejects if it has not come within `timeoutMs`.
 */
export function nextCycle(cycles: readonly WatchCycle[], index: number, timeoutMs = 10_000): Promise<WatchCycle> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const cycle = cycles[index];
      if (cycle) resolve(cycle);
      else if (Date.now() - started > timeoutMs) reject(new Error(`no watch run #${index + 1}`));
      else setTimeout(poll, 10);
    };
    poll();
  });
}
