/**
 * The framework installed from its packed tarball with production dependencies only, into an
 * app outside the repository (the files in `probe/`): its bins work, and importing the package
 * for the in-process runtime loads none of what only other paths need.
 *
 * - `mcp-taskgen` generates the probe's manifest (it needs ts-morph, a dependency); the probe is
 *   then compiled with this repository's `tsc` against the installed types, as a user's build
 *   would.
 * - `mcp-task` lists the tools and runs a plain tool and a task on the probe's server.
 * - The probe server records every module its process loads (`record-modules.mjs`): no
 *   bullmq or ioredis (the BullMQ runtime loads them when it builds its first connection), no
 *   ts-morph or TypeScript (the generator's), no pino-pretty (terminal output only), no
 *   commander, @clack/prompts or cli-progress (`mcp-task`'s). A control builds a BullMQ runtime
 *   in the same kind of process and must see bullmq and ioredis, so the record can see them.
 *   Importing `mcp-task-server/client` and `mcp-task-server/testing` loads none of them either.
 *
 * Network: the npm registry only, and `--prefer-offline` lets npm's cache answer.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnvironment, runCommand } from '../scaffold/commands.js';
import { packedPackages } from '../support/packed-packages.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const app = mkdtempSync(path.join(tmpdir(), 'mcp-task-server-production-'));
const bin = (name: string) => path.join(app, 'node_modules', '.bin', name);
/** No REDIS_URL from the surrounding shell: the probe must take the in-process default. */
const env = { REDIS_URL: '', MCP_TASK_LOG_LEVEL: 'warn' };

/** Loaded only on the paths that need them; never by importing the root and serving in-process. */
const NOT_LOADED = [
  'bullmq',
  'ioredis',
  'ts-morph',
  '@ts-morph/common',
  'typescript',
  'pino-pretty',
  'commander',
  '@clack/prompts',
  'cli-progress',
];

const timings: string[] = [];
let installOutput = '';

beforeAll(async () => {
  const { framework } = await packedPackages();
  cpSync(path.join(import.meta.dirname, 'probe'), app, { recursive: true });
  writeFileSync(
    path.join(app, 'package.json'),
    `${JSON.stringify({ name: 'probe', private: true, type: 'module', dependencies: { 'mcp-task-server': `file:${framework.tarball}` } }, null, 2)}\n`,
  );
  const install = await runCommand(
    'npm',
    ['install', '--omit=dev', '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund'],
    { cwd: app, timeoutMs: 240_000 },
  );
  installOutput = install.output;
  timings.push(`npm install --omit=dev ${(install.durationMs / 1000).toFixed(1)} s`);
}, 300_000);

afterAll(() => {
  console.info(`production install timings: ${timings.join(', ')}`);
  rmSync(app, { recursive: true, force: true });
});

/** Starts `node --import ./record-modules.mjs <script>` in the app; the module log is per process. */
function recorded(script: string): ChildProcessWithoutNullStreams {
  const log = path.join(app, `${path.basename(script, '.mjs')}-modules.log`);
  writeFileSync(log, '');
  return spawn(process.execPath, ['--import', './record-modules.mjs', script], {
    cwd: app,
    env: cleanEnvironment({ ...env, MODULE_LOG: log }),
  });
}

/** Collects a child's output and resolves with the first match of `pattern`. */
function waitFor(child: ChildProcessWithoutNullStreams, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (code ${code}) before printing ${pattern}:\n${output}`));
    });
  });
}

describe('mcp-task-server installed with production dependencies only', () => {
  it('installs none of its development dependencies', () => {
    expect(installOutput).not.toContain('EBADENGINE');
    for (const dev of ['vitest', 'tsx', 'typescript', '@biomejs/biome', 'publint'])
      expect(existsSync(path.join(app, 'node_modules', dev)), dev).toBe(false);
  });

  it('mcp-taskgen generates the manifest, which compiles against the installed types', async () => {
    const generated = await runCommand(
      bin('mcp-taskgen'),
      ['--project', 'tsconfig.json', '--out', 'src/__generated__/tasks.generated.ts'],
      { cwd: app, env, timeoutMs: 120_000 },
    );
    timings.push(`mcp-taskgen ${(generated.durationMs / 1000).toFixed(1)} s`);
    expect(generated.output).toContain('tasks.generated.ts (2 tools)');
    // @types/node is the app's own development dependency; this repository's copy stands in for it.
    const nodeTypes = ['--typeRoots', path.join(repoRoot, 'node_modules', '@types'), '--types', 'node'];
    await runCommand(path.join(repoRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json', ...nodeTypes], {
      cwd: app,
      timeoutMs: 120_000,
    });
    expect(existsSync(path.join(app, 'dist', '__generated__', 'tasks.generated.js'))).toBe(true);
  }, 240_000);

  describe('the probe server, on the in-process runtime', () => {
    let server: ChildProcessWithoutNullStreams;
    let url: string;

    beforeAll(async () => {
      server = recorded('server.mjs');
      const listening = await waitFor(server, /probe listening on (\S+) \(runtime: (\w+)\)/, 30_000);
      url = listening[1] as string;
      expect(listening[2]).toBe('memory');
    }, 60_000);

    afterAll(() => {
      server?.kill('SIGKILL');
    });

    it('answers mcp-task: tools, a plain call and a task followed to its result', async () => {
      const tools = await runCommand(bin('mcp-task'), ['tools', url], { cwd: app, env, timeoutMs: 30_000 });
      expect(tools.output).toMatch(/^count {2}Counts up to a number/m);
      expect(tools.output).toMatch(/^greet {2}Greets someone\./m);
      const greeting = await runCommand(bin('mcp-task'), ['call', url, 'greet', '--no-task', '-a', 'name=Ada'], {
        cwd: app,
        env,
        timeoutMs: 30_000,
      });
      expect(greeting.output).toContain('Hello, Ada!');
      const counted = await runCommand(bin('mcp-task'), ['call', url, 'count', '-a', 'to=3', '--json'], {
        cwd: app,
        env,
        timeoutMs: 30_000,
      });
      const outcome = JSON.parse(counted.output.trim().split('\n').at(-1) as string);
      expect(outcome).toMatchObject({ status: 'completed', result: { structuredContent: { counted: 3 } } });
    }, 90_000);

    it('has loaded none of bullmq, ioredis, ts-morph, pino-pretty or the CLI libraries', async () => {
      const report = waitFor(server, /loaded: (\[.*\])\n/, 30_000);
      server.stdin.write('report\n');
      const loaded = JSON.parse((await report)[1] as string) as string[];
      console.info(`the probe server loaded: ${loaded.join(' ')}`);
      // The record works: what serving needs is in it.
      expect(loaded).toEqual(expect.arrayContaining(['@modelcontextprotocol/server', 'pino', 'zod']));
      expect(loaded.filter((name) => NOT_LOADED.includes(name))).toEqual([]);
    }, 60_000);
  });

  it('the client and test-kit entries load none of them either', async () => {
    const entries = recorded('entries.mjs');
    const loaded = JSON.parse((await waitFor(entries, /loaded: (\[.*\])\n/, 30_000))[1] as string) as string[];
    expect(loaded).toEqual(expect.arrayContaining(['@modelcontextprotocol/client', 'zod']));
    expect(loaded.filter((name) => NOT_LOADED.includes(name))).toEqual([]);
  }, 60_000);

  it('control: building a BullMQ runtime loads bullmq and ioredis, and the record sees them', async () => {
    const control = recorded('bullmq-control.mjs');
    const loaded = JSON.parse((await waitFor(control, /loaded: (\[.*\])\n/, 30_000))[1] as string) as string[];
    expect(loaded).toEqual(expect.arrayContaining(['bullmq', 'ioredis']));
  }, 60_000);
});
