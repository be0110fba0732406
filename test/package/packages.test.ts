/**
 * The two packages as they would be published: packed once (test/support/packed-packages.ts),
 * then checked the way a registry user meets them.
 *
 * - publint (strict: warnings fail too) checks the manifest against the files: every path in
 *   `exports`, `bin` and `types` exists in the tarball, and the conditions are in an order
 *   resolvers honour.
 * - attw (Are the Types Wrong) resolves every entry point as TypeScript does and checks that
 *   the types it finds describe the JavaScript Node loads. Profile `esm-only`: both packages
 *   are ES modules only (`"type": "module"`, no `require` condition), so the two resolutions
 *   that profile skips are ones the packages do not serve on purpose: `node10` (TypeScript's
 *   legacy resolution, which does not read `exports` and so cannot see the subpaths) and a
 *   CommonJS `require` of the package (Node 20.19+ loads ES modules from `require`, but
 *   TypeScript's node16 mode reports it as an error by design).
 * - The file lists are pinned: the framework ships exactly its tracked sources, their build
 *   output and its documents; the scaffolder its build output, the repository's templates and
 *   its documents. A test, a fixture, a scratch folder or a stale build file that starts
 *   shipping fails here, named.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanEnvironment, runCommand } from '../scaffold/commands.js';
import { type PackedPackage, type PackedPackages, packedPackages } from '../support/packed-packages.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const execFileAsync = promisify(execFile);
const MANIFESTS = { framework: 'package.json', scaffolder: 'cli/create-mcp-task-server/package.json' } as const;
/** The resolutions attw's `esm-only` profile leaves out: see the header. */
const NOT_SERVED = new Set(['node10', 'node16-cjs']);
const bin = (name: string) => path.join(repoRoot, 'node_modules', '.bin', name);
/** The documents each package ships beside its code; CHANGELOG.md once a release wrote one. */
const DOCUMENTS = ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json'];
/** Left out of the copied templates (see cli/create-mcp-task-server/scripts/templates.mjs). */
const NOT_IN_TEMPLATES = new Set(['node_modules', 'dist', '.env']);

let packs: PackedPackages;

beforeAll(async () => {
  packs = await packedPackages();
  console.info(`packed both packages in ${(packs.packMs / 1000).toFixed(1)} s`);
}, 300_000);

/** Files tracked by git under `folder` of the repository, relative to it. */
function tracked(folder: string): string[] {
  return execFileSync('git', ['ls-files', '-z', '--', folder], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && existsSync(path.join(repoRoot, file)));
}

function documents(packageDir: string): string[] {
  return DOCUMENTS.filter((name) => existsSync(path.join(repoRoot, packageDir, name)));
}

/** Unexpected and missing files, both empty when the tarball holds exactly `expected`. */
function drift(packed: PackedPackage, expected: string[]) {
  const want = new Set(expected);
  const have = new Set(packed.files);
  return {
    unexpected: packed.files.filter((file) => !want.has(file)),
    missing: [...want].filter((file) => !have.has(file)).sort(),
  };
}

describe.each(['framework', 'scaffolder'] as const)('the packed %s', (which) => {
  it('passes publint, warnings included', async () => {
    const { output } = await runCommand(bin('publint'), ['--strict', packs[which].tarball], {
      cwd: repoRoot,
      timeoutMs: 60_000,
    });
    expect(output).toContain('All good!');
  }, 90_000);

  it('passes attw for an ES-module-only package, on every entry point it exports', async () => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, MANIFESTS[which]), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    // JSON on stdout; a non-zero exit (problems found) still carries the report.
    const report = await execFileAsync(
      bin('attw'),
      ['--profile', 'esm-only', '--format', 'json', packs[which].tarball],
      {
        cwd: repoRoot,
        env: cleanEnvironment(),
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      if (!error.stdout) throw new Error(`attw did not run: ${error.message}\n${error.stderr ?? ''}`);
      return { stdout: error.stdout };
    });
    const { analysis } = JSON.parse(report.stdout) as {
      analysis: {
        entrypoints: Record<string, unknown>;
        problems: { kind: string; entrypoint: string; resolutionKind?: string }[];
      };
    };
    expect(Object.keys(analysis.entrypoints).sort()).toEqual(Object.keys(manifest.exports).sort());
    const counted = analysis.problems.filter(
      (problem) => problem.resolutionKind === undefined || !NOT_SERVED.has(problem.resolutionKind),
    );
    expect(counted).toEqual([]);
  }, 90_000);
});

describe('the packed file lists', () => {
  it('framework: the tracked sources of src/ and cli/, their build output, and the documents', () => {
    const sources = [...tracked('src'), ...tracked('cli')]
      .filter((file) => !file.startsWith('cli/create-mcp-task-server/'))
      .filter((file) => !/\.test\.[^/]+$/.test(file));
    // What tsc writes for each: the module, its types, and maps back to the shipped source.
    const built = sources.flatMap((file) => {
      const stem = `dist/${file.replace(/\.ts$/, '')}`;
      return [`${stem}.js`, `${stem}.js.map`, `${stem}.d.ts`, `${stem}.d.ts.map`];
    });
    expect(drift(packs.framework, [...documents('.'), ...sources, ...built])).toEqual({ unexpected: [], missing: [] });
  });

  it('framework: no test, fixture or scratch file anywhere', () => {
    const unwanted = packs.framework.files.filter((file) =>
      /(^|\/)(test|tests|fixtures|__fixtures__|coverage|\.tmp[^/]*)\/|\.test\.|\.tgz$/.test(file),
    );
    expect(unwanted).toEqual([]);
  });

  it('scaffolder: its build output, the repository templates as tracked, and the documents', () => {
    const packageDir = 'cli/create-mcp-task-server';
    const built = tracked(`${packageDir}/src`).map(
      (file) => `dist/${path.posix.relative(`${packageDir}/src`, file).replace(/\.ts$/, '.js')}`,
    );
    const templates = tracked('templates')
      .filter((file) => /^templates\/template-[^/]+\//.test(file))
      .filter((file) => !file.split('/').some((part) => NOT_IN_TEMPLATES.has(part)));
    expect(drift(packs.scaffolder, [...documents(packageDir), ...built, ...templates])).toEqual({
      unexpected: [],
      missing: [],
    });
  });

  it('both: the same MIT licence', () => {
    const licence = readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) 2026 mcp-task-server contributors\n/);
    expect(readFileSync(path.join(repoRoot, 'cli/create-mcp-task-server/LICENSE'), 'utf8')).toBe(licence);
    for (const manifest of ['package.json', 'cli/create-mcp-task-server/package.json']) {
      expect(JSON.parse(readFileSync(path.join(repoRoot, manifest), 'utf8')).license, manifest).toBe('MIT');
    }
  });
});
