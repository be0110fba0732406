/**
 * The CLI end to end on a copy of the small ts7-project fixture (small, so that each run is
 * quick): write, skip, check, refuse, report. Most cases call `runCli` in-process; one runs the
 * real bin to prove the wiring.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/generator/cli.js';
import { copyFixture, fixtureTsconfig, REPO_ROOT, removeDir, scratchDir, TSC_TIMEOUT_MS } from './helpers.js';

const OUT = 'src/__generated__/tasks.generated.ts';
const copies: string[] = [];

afterAll(() => {
  for (const copy of copies) removeDir(copy);
});

function freshProject(): string {
  const project = copyFixture('ts7-project');
  copies.push(project);
  return project;
}

function run(cwd: string, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const exitCode = runCli(args, { cwd, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  if (typeof exitCode !== 'number') throw new Error('only --watch returns a promise');
  return { exitCode, stdout, stderr };
}

describe('mcp-taskgen', () => {
  it('writes the module, reports it, and leaves it untouched when nothing changed', () => {
    const project = freshProject();
    const first = run(project);
    expect(first).toEqual({ exitCode: 0, stdout: `mcp-taskgen: wrote ${OUT} (1 tool)\n`, stderr: '' });
    const modified = statSync(path.join(project, OUT)).mtimeMs;

    const second = run(project);
    expect(second).toEqual({ exitCode: 0, stdout: `mcp-taskgen: unchanged: ${OUT} (1 tool)\n`, stderr: '' });
    expect(statSync(path.join(project, OUT)).mtimeMs).toBe(modified);
  });

  it('--check exits 1 for a missing or stale module, with a diff excerpt, and 0 once regenerated', () => {
    const project = freshProject();
    const missing = run(project, '--check');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(`missing: ${OUT}`);
    expect(existsSync(path.join(project, OUT))).toBe(false);

    expect(run(project).exitCode).toBe(0);
    const source = path.join(project, 'src/greeter.ts');
    writeFileSync(source, readFileSync(source, 'utf8').replace('Greets someone.', 'Greets everyone.'));
    const stale = run(project, '--check');
    expect(stale.exitCode).toBe(1);
    expect(stale.stderr).toContain(`stale: ${OUT}`);
    expect(stale.stderr).toContain("-       description: 'Greets someone.',");
    expect(stale.stderr).toContain("+       description: 'Greets everyone.',");

    expect(run(project).stdout).toBe(`mcp-taskgen: wrote ${OUT} (1 tool)\n`);
    expect(run(project, '--check')).toEqual({
      exitCode: 0,
      stdout: `mcp-taskgen --check: ${OUT} is up to date (1 tool).\n`,
      stderr: '',
    });
  });

  it('refuses to overwrite a file that lacks the generated header', () => {
    const project = freshProject();
    const target = path.join(project, 'src/handwritten.ts');
    writeFileSync(target, 'export const keep = 1;\n');
    const refused = run(project, '--out', 'src/handwritten.ts');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('refusing to overwrite src/handwritten.ts');
    expect(readFileSync(target, 'utf8')).toBe('export const keep = 1;\n');
  });

  it(
    'prints every diagnostic with its frame and the count, exits 1 and writes nothing',
    () => {
      // A directory without configuration: the fixture copies carry an `include` in package.json.
      const cwd = scratchDir('no-config');
      copies.push(cwd);
      const failed = run(cwd, '--project', fixtureTsconfig('unsupported'), '--out', 'out/tasks.generated.ts');
      expect(failed.exitCode).toBe(1);
      expect(failed.stdout).toBe('');
      expect(failed.stderr).toMatch(/^\.\.\/\.\.\/fixtures\/unsupported\/src\/\S+\.ts:\d+:\d+ - error MTG\d{4}: /);
      expect(failed.stderr).toContain('\n  hint: ');
      expect(failed.stderr).toMatch(/\nFound \d+ errors and \d+ warnings\.\n$/);
      expect(existsSync(path.join(cwd, 'out'))).toBe(false);
      // Reads the whole `unsupported` fixture, which takes over 20 s on a loaded machine.
    },
    TSC_TIMEOUT_MS,
  );

  it('exits 2 on bad usage and on a missing tsconfig', () => {
    const project = freshProject();
    expect(run(project, '--bogus')).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining("unknown argument '--bogus'"),
    });
    expect(run(project, '--out')).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--out needs a path') });
    expect(run(project, '-p', 'nope.json')).toMatchObject({
      exitCode: 2,
      stderr: expect.stringContaining('cannot find nope.json'),
    });
    expect(run(project, '--help')).toMatchObject({
      exitCode: 0,
      stdout: expect.stringContaining('Usage: mcp-taskgen'),
    });
  });

  it('runs as the `mcp-taskgen` bin', () => {
    const project = freshProject();
    const bin = path.join(REPO_ROOT, 'cli/mcp-taskgen.ts');
    const spawn = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', bin, ...args], { cwd: project, encoding: 'utf8' });
    expect(run(project).exitCode).toBe(0);
    const checked = spawn('--project=tsconfig.json', '--check');
    expect(checked.stdout).toBe(`mcp-taskgen --check: ${OUT} is up to date (1 tool).\n`);
    expect(checked.status).toBe(0);
  });
});
