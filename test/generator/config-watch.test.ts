/**
 * Configuration (config file, package.json field, flags on top), `--check` on extra files, and
 * `--watch`, on copies of the small `ts7-project` fixture: an app whose own compiler is
 * TypeScript 7, with a stand-in `typescript` package that throws if anything loads it.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/generator/cli.js';
import { type WatchCycle, watchProject } from '../../src/generator/index.js';
import { copyFixture, FIXTURES, nextCycle, removeDir } from './helpers.js';

const OUT = 'src/__generated__/tasks.generated.ts';
const CLIENT = 'client/app.client.ts';
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

describe('configuration', () => {
  it('runs against a project whose own typescript is version 7 without loading it', () => {
    const fixture = path.join(FIXTURES, 'ts7-project');
    const projectTypescript = createRequire(path.join(fixture, 'package.json')).resolve('typescript');
    expect(projectTypescript).toBe(path.join(fixture, 'node_modules/typescript/index.js'));
    expect(JSON.parse(readFileSync(path.join(fixture, 'package.json'), 'utf8')).devDependencies).toEqual({
      typescript: '7.0.2',
    });
    const project = freshProject();
    expect(run(project)).toEqual({ exitCode: 0, stdout: `mcp-taskgen: wrote ${OUT} (1 tool)\n`, stderr: '' });
  });

  it('reads the "mcp-taskgen" field of package.json: out, and include that leaves src/ignored.ts out', () => {
    const project = freshProject();
    expect(run(project).exitCode).toBe(0);
    const generated = readFileSync(path.join(project, OUT), 'utf8');
    expect(generated).toContain("name: 'greet'");
    expect(generated).not.toContain("name: 'skipped'");
  });

  it('prefers mcp-taskgen.config.json, resolving its paths from its own directory', () => {
    const project = freshProject();
    writeFileSync(
      path.join(project, 'mcp-taskgen.config.json'),
      JSON.stringify({ project: 'tsconfig.json', out: 'generated/all.generated.ts', include: ['src'] }),
    );
    expect(run(project)).toMatchObject({
      exitCode: 0,
      stdout: 'mcp-taskgen: wrote generated/all.generated.ts (2 tools)\n',
    });
    expect(existsSync(path.join(project, OUT))).toBe(false);
  });

  it('writes the typed client named by the "client" setting, and --check checks it', () => {
    const project = freshProject();
    writeFileSync(path.join(project, 'mcp-taskgen.config.json'), JSON.stringify({ out: OUT, client: CLIENT }));
    expect(run(project)).toEqual({
      exitCode: 0,
      stdout: `mcp-taskgen: wrote ${OUT} (2 tools)\nmcp-taskgen: wrote ${CLIENT} (2 tools)\n`,
      stderr: '',
    });
    const client = path.join(project, CLIENT);
    expect(readFileSync(client, 'utf8')).toContain("from 'mcp-task-server/client'");
    expect(run(project, '--check')).toMatchObject({ exitCode: 0 });

    // A stale client alone fails the check, with the module itself up to date.
    writeFileSync(client, readFileSync(client, 'utf8').replace('greet', 'welcome'));
    const stale = run(project, '--check');
    expect(stale.exitCode).toBe(1);
    expect(stale.stderr).toContain(`stale: ${CLIENT}`);
    expect(stale.stderr).not.toContain(`: ${OUT}`);

    // --client on the command line overrides the setting.
    expect(run(project, '--client', 'elsewhere.client.ts')).toMatchObject({
      exitCode: 0,
      stdout: `mcp-taskgen: unchanged: ${OUT} (2 tools)\nmcp-taskgen: wrote elsewhere.client.ts (2 tools)\n`,
    });
  });

  it('lets flags override the configuration', () => {
    const project = freshProject();
    const result = run(project, '--include', 'src/ignored.ts', '--out', 'other.generated.ts');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'mcp-taskgen: wrote other.generated.ts (1 tool)\n' });
    expect(readFileSync(path.join(project, 'other.generated.ts'), 'utf8')).toContain("name: 'skipped'");
  });

  it('exits 2 on a malformed or unknown setting, naming where it came from', () => {
    const project = freshProject();
    writeFileSync(path.join(project, 'mcp-taskgen.config.json'), JSON.stringify({ output: 'x.ts' }));
    expect(run(project)).toMatchObject({
      exitCode: 2,
      stderr: "mcp-taskgen: mcp-taskgen.config.json: unknown setting 'output' (known: project, out, include, client)\n",
    });
    writeFileSync(path.join(project, 'mcp-taskgen.config.json'), JSON.stringify({ client: 42 }));
    expect(run(project)).toMatchObject({
      exitCode: 2,
      stderr: "mcp-taskgen: mcp-taskgen.config.json: 'client' must be a path (a non-empty string), not 42\n",
    });
    expect(run(project, '--config', 'missing.json')).toMatchObject({
      exitCode: 2,
      stderr: 'mcp-taskgen: cannot find the config file missing.json\n',
    });
    expect(run(project, '--check', '--watch')).toMatchObject({ exitCode: 2 });
  });

  it('--check lists a generated file that is no longer produced, and exits 1', () => {
    const project = freshProject();
    expect(run(project).exitCode).toBe(0);
    copyFileSync(path.join(project, OUT), path.join(project, 'src/__generated__/old.generated.ts'));
    writeFileSync(path.join(project, 'src/__generated__/notes.ts'), '// hand-written, not ours\n');
    const checked = run(project, '--check');
    expect(checked.exitCode).toBe(1);
    expect(checked.stderr).toContain(
      'extra: src/__generated__/old.generated.ts (generated by mcp-taskgen, but no longer produced: delete it)',
    );
    expect(checked.stderr).not.toContain('notes.ts');
    expect(checked.stderr).not.toContain(`: ${OUT}`);
  });

  it('prints warnings and still exits 0', () => {
    const project = freshProject();
    const greeter = path.join(project, 'src/greeter.ts');
    writeFileSync(
      greeter,
      readFileSync(greeter, 'utf8').replace('/** Greets someone. */', '/** Greets.\n   * @retry 3 */'),
    );
    const result = run(project);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(
      /^src\/greeter\.ts:\d+:\d+ - warning MTG1013: Greeter\.greet: mcp-taskgen ignores the JSDoc tag @retry/,
    );
    expect(result.stdout).toContain('mcp-taskgen: Found 1 warning.\n');
  });
});

describe('--watch', () => {
  it('regenerates after an edit, keeps the last good output on errors, and ignores its own output', async () => {
    const project = freshProject();
    const out = path.join(project, OUT);
    const greeter = path.join(project, 'src/greeter.ts');
    const original = readFileSync(greeter, 'utf8');
    const cycles: WatchCycle[] = [];
    let log = '';
    const handle = watchProject({
      tsconfig: path.join(project, 'tsconfig.json'),
      out,
      cwd: project,
      log: (text) => (log += text),
      onCycle: (cycle) => cycles.push(cycle),
    });
    try {
      expect((await nextCycle(cycles, 0)).outcome).toBe('written');

      writeFileSync(greeter, original.replace('async greet(', 'async greetLoudly('));
      const edited = await nextCycle(cycles, 1);
      expect(edited).toMatchObject({ outcome: 'written', changed: [greeter] });
      expect(readFileSync(out, 'utf8')).toContain("name: 'greet_loudly'");

      writeFileSync(greeter, original.replace('name: string', 'name: Map<string, string>'));
      expect((await nextCycle(cycles, 2)).outcome).toBe('errors');
      expect(log).toContain('error MTG1005');
      expect(log).toContain(`Kept the last good ${OUT}`);
      expect(readFileSync(out, 'utf8')).toContain("name: 'greet_loudly'");

      writeFileSync(greeter, original);
      expect((await nextCycle(cycles, 3)).outcome).toBe('written');
      expect(readFileSync(out, 'utf8')).toContain("name: 'greet'");
      // Writing the output must not have started another run.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(cycles).toHaveLength(4);
    } finally {
      await handle.stop();
    }
  });

  it('regenerates the typed client with the module, and ignores the client it writes', async () => {
    const project = freshProject();
    const out = path.join(project, OUT);
    // Inside the tsconfig's `include`, where it must neither be scanned nor start another run.
    const client = path.join(project, 'src/__generated__/app.client.ts');
    const greeter = path.join(project, 'src/greeter.ts');
    const cycles: WatchCycle[] = [];
    const handle = watchProject({
      tsconfig: path.join(project, 'tsconfig.json'),
      out,
      client,
      cwd: project,
      log: () => {},
      onCycle: (cycle) => cycles.push(cycle),
    });
    try {
      expect((await nextCycle(cycles, 0)).outcome).toBe('written');
      expect(readFileSync(client, 'utf8')).toContain('greet(');

      writeFileSync(greeter, readFileSync(greeter, 'utf8').replace('async greet(', 'async greetLoudly('));
      expect(await nextCycle(cycles, 1)).toMatchObject({ outcome: 'written', changed: [greeter] });
      const regenerated = readFileSync(client, 'utf8');
      expect(regenerated).toContain('greetLoudly(');
      expect(regenerated).not.toContain('greet(');
      // `--check` agrees with what the watcher wrote, for both files (the watcher scanned all of src/).
      expect(run(project, '--check', '--include', 'src', '--client', 'src/__generated__/app.client.ts')).toEqual({
        exitCode: 0,
        stdout: `mcp-taskgen --check: ${OUT}, src/__generated__/app.client.ts is up to date (2 tools).\n`,
        stderr: '',
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(cycles).toHaveLength(2);
    } finally {
      await handle.stop();
    }
  });

  it('takes the client from the configuration in the CLI', async () => {
    const project = freshProject();
    writeFileSync(path.join(project, 'mcp-taskgen.config.json'), JSON.stringify({ client: CLIENT }));
    const controller = new AbortController();
    let stdout = '';
    const running = runCli(['--watch'], {
      cwd: project,
      stdout: (text) => (stdout += text),
      stderr: () => {},
      signal: controller.signal,
    });
    expect(stdout).toContain(`mcp-taskgen --watch: wrote ${OUT}, ${CLIENT} (2 tools)`);
    expect(readFileSync(path.join(project, CLIENT), 'utf8')).toContain('greet(');
    controller.abort();
    await expect(running).resolves.toBe(0);
  });

  it('stops when the CLI is signalled, exiting 0', async () => {
    const project = freshProject();
    const controller = new AbortController();
    let stdout = '';
    const running = runCli(['--watch'], {
      cwd: project,
      stdout: (text) => (stdout += text),
      stderr: () => {},
      signal: controller.signal,
    });
    expect(running).toBeInstanceOf(Promise);
    expect(stdout).toContain(`mcp-taskgen --watch: wrote ${OUT} (1 tool)`);
    controller.abort();
    await expect(running).resolves.toBe(0);
  });
});
