/**
 * The two packages as `npm publish` would upload them, packed once per test run: the framework
 * (its `prepack` builds dist/) and the scaffolder (its `prepack` builds and copies the
 * templates in). Every test file that needs a tarball calls `packedPackages()`; the first one
 * packs into the run's folder (pack-directory.ts) while the others wait for it, so dist/ is
 * never built by two packs at once.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { runCommand } from '../scaffold/commands.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** One packed package: its tarball and the files in it, relative to the package root, sorted. */
export interface PackedPackage {
  readonly name: string;
  readonly version: string;
  readonly tarball: string;
  readonly files: readonly string[];
}

export interface PackedPackages {
  /** The folder holding both tarballs, under the names `npm pack` gives them. */
  readonly directory: string;
  readonly framework: PackedPackage;
  readonly scaffolder: PackedPackage;
  /** How long packing took, in this test file or the one that packed first. */
  readonly packMs: number;
}

/** Long enough for both prepack builds on a busy two-core machine. */
const PACK_TIMEOUT_MS = 240_000;

let packed: Promise<PackedPackages> | undefined;

/** The packed packages of this test run; packs them the first time any test file asks. */
export function packedPackages(): Promise<PackedPackages> {
  packed ??= packOnce(inject('packDirectory'));
  return packed;
}

async function packOnce(directory: string): Promise<PackedPackages> {
  const result = path.join(directory, 'packed.json');
  const failure = path.join(directory, 'pack-failed.txt');
  try {
    // mkdir is atomic: exactly one test file of the run gets to pack.
    mkdirSync(path.join(directory, 'packing'));
  } catch {
    return waitForPack(result, failure);
  }
  try {
    const started = performance.now();
    const framework = await pack('mcp-task-server', ['pack', '--pack-destination', directory], directory);
    const scaffolder = await pack(
      'create-mcp-task-server',
      ['pack', '--workspace', 'create-mcp-task-server', '--pack-destination', directory],
      directory,
    );
    const packs: PackedPackages = { directory, framework, scaffolder, packMs: performance.now() - started };
    writeFileSync(result, JSON.stringify(packs));
    return packs;
  } catch (error) {
    writeFileSync(failure, error instanceof Error ? error.message : String(error));
    throw error;
  }
}

async function waitForPack(result: string, failure: string): Promise<PackedPackages> {
  const deadline = performance.now() + PACK_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (existsSync(result)) return JSON.parse(readFileSync(result, 'utf8')) as PackedPackages;
    if (existsSync(failure)) throw new Error(`packing failed in another test file:\n${readFileSync(failure, 'utf8')}`);
    await sleep(200);
  }
  throw new Error(`another test file started packing and did not finish in ${PACK_TIMEOUT_MS} ms`);
}

async function pack(name: string, args: string[], directory: string): Promise<PackedPackage> {
  const manifest = name === 'mcp-task-server' ? 'package.json' : 'cli/create-mcp-task-server/package.json';
  const { version } = JSON.parse(readFileSync(path.join(repoRoot, manifest), 'utf8')) as { version: string };
  await runCommand('npm', [...args, '--silent'], { cwd: repoRoot, timeoutMs: PACK_TIMEOUT_MS });
  const tarball = path.join(directory, `${name}-${version}.tgz`);
  // What is in the tarball itself, not what npm says it would put there.
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
  const files = stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
    .sort();
  return { name, version, tarball, files };
}
