/**
 * The path a user takes before anything is published, end to end: `npm run create-app` packs
 * the framework and the scaffolder (as `npm publish` would; test/support/packed-packages.ts
 * packs them once per run for this file and test/package), scaffolds an app with the packed
 * scaffolder (what `npx create-mcp-task-server` runs) and points its mcp-task-server dependency
 * at the packed framework. Each template is scaffolded from the same pack, then installed
 * (sharing the npm cache), built and tested the way a user would. For the default template,
 * `npm run dev` must regenerate and restart on save, `npm start` must drain on SIGTERM, and with
 * Redis its own server and worker processes complete tasks for a real client.
 *
 * Network: the npm registry only, and `--prefer-offline` lets npm's cache answer. Takes 2-4 minutes.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithRedis, keysUnder, REDIS_URL, withRedis } from '../bullmq/support.js';
import { connectV1, pollUntil } from '../e2e/support.js';
import { packedPackages } from '../support/packed-packages.js';
import { expectNpmStartToStopOnSigterm, type LongRunning, runCommand, startCommand } from './commands.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const INSTALL = ['--prefer-offline', '--no-audit', '--no-fund'];
const LISTENING = /MCP task server listening on (\S+)/;

/** Holds the scaffolded apps; outside the repository, so npm sees no workspace around them. */
const work = mkdtempSync(path.join(tmpdir(), 'mcp-task-server-scaffold-'));
/** One pack for every app and for test/package: create-app finds the tarballs there and reuses them. */
let tarballs = '';
const app = path.join(work, 'app');
const minimalApp = path.join(work, 'minimal-app');
const stdioApp = path.join(work, 'stdio-app');
const timings: string[] = [];
let scaffoldOutput = '';
const installOutputs: Record<string, string> = {};

async function timed(label: string, step: () => Promise<{ output: string; durationMs: number }>) {
  const { output, durationMs } = await step();
  timings.push(`${label} ${(durationMs / 1000).toFixed(1)} s`);
  return output;
}

const npm = (args: string[], cwd: string, timeoutMs: number, env?: Record<string, string>) =>
  runCommand('npm', args, { cwd, timeoutMs, ...(env && { env }) });

/** `npm run create-app -- <directory> ...` from the clone, run from `work` as a user would from a folder of theirs. */
const createApp = (args: string[], timeoutMs: number) =>
  npm(['--prefix', repoRoot, 'run', 'create-app', '--', ...args], work, timeoutMs, {
    MCP_TASK_SERVER_TARBALLS: tarballs,
  });

beforeAll(async () => {
  // `prepack` builds each package first: the framework's dist/, the scaffolder's dist/ and its copy of templates/.
  const packs = await packedPackages();
  tarballs = packs.directory;
  timings.push(`pack both ${(packs.packMs / 1000).toFixed(1)} s (once per run, maybe by another test file)`);
  scaffoldOutput = await timed('create-app (scaffold)', () => createApp(['app'], 180_000));
  expect(existsSync(path.join(tarballs, `mcp-task-server-${version}.tgz`))).toBe(true);
  expect(existsSync(path.join(tarballs, `create-mcp-task-server-${version}.tgz`))).toBe(true);
  expect(existsSync(path.join(repoRoot, 'cli/create-mcp-task-server/templates')), 'postpack removes the copy').toBe(
    false,
  );
  await timed('create-app minimal, stdio', async () => {
    const started = performance.now();
    await createApp(['minimal-app', '--template', 'minimal'], 60_000);
    await createApp(['stdio-app', '--template', 'stdio'], 60_000);
    return { output: '', durationMs: performance.now() - started };
  });
  // One npm cache for the three: the first install fills it, the others read it.
  installOutputs.app = await timed('npm install', () => npm(['install', ...INSTALL], app, 180_000));
  const [minimal, stdio] = await Promise.all([
    timed('npm install minimal', () => npm(['install', ...INSTALL], minimalApp, 180_000)),
    timed('npm install stdio', () => npm(['install', ...INSTALL], stdioApp, 180_000)),
  ]);
  installOutputs.minimal = minimal;
  installOutputs.stdio = stdio;
}, 420_000);

afterAll(() => {
  console.info(`scaffold timings: ${timings.join(', ')}`);
  rmSync(work, { recursive: true, force: true });
}, 120_000); // three node_modules folders take a while to delete on a busy disk

describe('a scaffolded app, installed from the packed tarballs', () => {
  it('was written by the packed scaffolder, with .gitignore, the next steps and the framework in vendor/', () => {
    expect(scaffoldOutput).toContain('Next steps:\n  cd app\n  npm install\n  npm run dev\n');
    expect(scaffoldOutput).toContain(`mcp-task-server ${version} comes from vendor/mcp-task-server-${version}.tgz`);
    expect(existsSync(path.join(app, '.gitignore'))).toBe(true);
    for (const file of ['Dockerfile', '.dockerignore', 'compose.yaml'])
      expect(existsSync(path.join(app, file)), file).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('app');
    expect(manifest.dependencies['mcp-task-server']).toBe(`file:vendor/mcp-task-server-${version}.tgz`);
  });

  it('installs without engine warnings', () => {
    for (const [name, output] of Object.entries(installOutputs)) expect(output, name).not.toContain('EBADENGINE');
  });

  it('resolves mcp-task-server and its mcp-taskgen bin from the tarball, without the source condition', async () => {
    const installed = path.join(app, 'node_modules', 'mcp-task-server');
    expect(existsSync(path.join(installed, 'dist', 'src', 'index.js'))).toBe(true);
    const { output } = await runCommand(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('mcp-task-server'); console.log(typeof m.runTaskServer)"],
      { cwd: app, timeoutMs: 30_000 },
    );
    expect(output.trim()).toBe('function');
    const help = await npm(['exec', '--', 'mcp-taskgen', '--help'], app, 30_000);
    expect(help.output).toContain('Usage: mcp-taskgen');
  });

  it('builds: generates the manifest, then compiles to dist/', async () => {
    const output = await timed('npm run build', () => npm(['run', 'build'], app, 120_000));
    expect(output).toContain('tasks.generated.ts (2 tools)');
    expect(existsSync(path.join(app, 'dist', 'server.js'))).toBe(true);
    expect(existsSync(path.join(app, 'dist', 'worker.js'))).toBe(true);
  }, 150_000);

  it('passes its own tests', async () => {
    const output = await timed('npm test', () => npm(['test'], app, 150_000));
    expect(output).toMatch(/Tests\s+\d+ passed/);
    // The summary's counts, not the app's own logs (an expected tool failure logs `task failed`).
    expect(output).not.toMatch(/\b\d+ (failed|skipped)\b/);
  }, 180_000);

  it('npm start runs the built server, which drains and exits on SIGTERM', async () => {
    await expectNpmStartToStopOnSigterm(app, { PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' });
  }, 60_000);
});

describe.each([
  { template: 'minimal', directory: minimalApp, tools: '1 tool' },
  { template: 'stdio', directory: stdioApp, tools: '1 tool' },
])('the $template template, installed from the packed tarballs', ({ template, directory, tools }) => {
  it('builds: generates the manifest, then compiles dist/server.js', async () => {
    const output = await timed(`npm run build (${template})`, () => npm(['run', 'build'], directory, 120_000));
    expect(output).toContain(`tasks.generated.ts (${tools})`);
    expect(existsSync(path.join(directory, 'dist', 'server.js'))).toBe(true);
  }, 150_000);

  it('passes its own tests', async () => {
    const output = await timed(`npm test (${template})`, () => npm(['test'], directory, 150_000));
    expect(output).toMatch(/Tests\s+\d+ passed/);
    // The summary's counts, not the app's own logs (an expected tool failure logs `task failed`).
    expect(output).not.toMatch(/\b\d+ (failed|skipped)\b/);
  }, 180_000);
});

describe('the minimal template', () => {
  it('npm start serves the built one-file app, which stops on SIGTERM', async () => {
    await expectNpmStartToStopOnSigterm(minimalApp, { PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' });
  }, 60_000);
});

describeWithRedis('the scaffolded app on Redis: its server and worker processes', () => {
  const prefix = `mcpt-scaffold-${randomBytes(6).toString('hex')}`;
  const env = { REDIS_URL, REDIS_PREFIX: prefix, PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' };
  let server: LongRunning;
  let worker: LongRunning;
  let client: Client;
  /** The questions the client was asked, on whichever stream (tasks/result or the GET stream). */
  const asked: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = startCommand('npm', ['start'], { cwd: app, env: { ...env, WORKERS: '0' } });
    worker = startCommand('npm', ['run', 'worker'], { cwd: app, env });
    const [listening] = await Promise.all([
      server.waitFor(LISTENING, 30_000),
      worker.waitFor(/MCP task worker running/, 30_000),
    ]);
    client = await connectV1(listening[1] as string, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { start: true } };
    });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await Promise.all([server?.stop(), worker?.stop()]);
    await withRedis(async (redis) => {
      const keys = await keysUnder(prefix);
      if (keys.length > 0) await redis.del(...keys);
    });
  });

  it('completes a task in the worker: start, poll, collect', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'count_primes', arguments: { below: 100_000 }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const done = await pollUntil(
      () => client.experimental.tasks.getTask(taskId),
      (task) => task.status !== 'working',
      30_000,
    );
    expect(done.status, `${server.output()}\n${worker.output()}`).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ below: 100_000, count: 9592, largest: 99_991 });
  }, 60_000);

  it('asks its question across processes and completes once answered', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'count_primes', arguments: { below: 2_000_000 }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    // The worker's question reaches this client as soon as it is asked: on the session's GET
    // stream, which this client keeps open, or on the tasks/result below if that comes first.
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ below: 2_000_000, count: 148_933, largest: 1_999_993 });
    const forThisTask = asked.filter(
      (params) =>
        (params._meta as Record<string, { taskId?: string }> | undefined)?.['io.modelcontextprotocol/related-task']
          ?.taskId === taskId,
    );
    expect(forThisTask).toHaveLength(1);
  }, 60_000);
});

describe('npm run dev', () => {
  /** The tool names served by the most recently started server, or none while it restarts. */
  async function servedTools(dev: LongRunning, from: number): Promise<string[]> {
    const url = [...dev.output().slice(from).matchAll(new RegExp(LISTENING, 'g'))].at(-1)?.[1];
    if (!url) return [];
    try {
      // Declaring tasks: the list as a task-aware client sees it, without companion tools.
      const client = await connectV1(url, { capabilities: { tasks: {} } });
      try {
        return (await client.listTools()).tools.map((tool) => tool.name);
      } finally {
        await client.close();
      }
    } catch {
      return [];
    }
  }

  it('restarts once per save on fresh glue, shows type errors, and stops serving when generation fails', async () => {
    const dev = startCommand('npm', ['run', 'dev'], { cwd: app, env: { PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' } });
    const TYPECHECK_DONE = /\[typecheck\]\s+(?:no type errors|\d+ type errors?)/;
    try {
      await Promise.all([
        dev.waitFor(LISTENING, 60_000),
        dev.waitFor(/mcp-taskgen --watch: watching for changes/, 60_000),
        dev.waitFor(/\[typecheck\]\s+no type errors/, 60_000),
      ]);
      expect(await servedTools(dev, 0)).toEqual(['count_primes', 'is_prime']);

      // A new tool: one generator run, one restart on the new glue.
      let from = dev.output().length;
      const source = path.join(app, 'src', 'prime-counter.ts');
      const original = readFileSync(source, 'utf8');
      const greet = `  /** Greets someone. */
  @Tool()
  async greet(name: string): Promise<string> {
    return \`Hello, \${name}!\`;
  }

`;
      const edited = original.replace('export class PrimeCounter {\n', `export class PrimeCounter {\n${greet}`);
      expect(edited).not.toBe(original);
      writeFileSync(source, edited);
      await dev.waitFor(
        /mcp-taskgen --watch: wrote src\/__generated__\/tasks\.generated\.ts \(3 tools\)/,
        30_000,
        from,
      );
      await pollUntil(
        () => servedTools(dev, from),
        (names) => names.includes('greet'),
        30_000,
      );
      await dev.waitFor(TYPECHECK_DONE, 60_000, from);
      expect([...dev.output().slice(from).matchAll(new RegExp(LISTENING, 'g'))]).toHaveLength(1);
      const url = [...dev.output().matchAll(new RegExp(LISTENING, 'g'))].at(-1)?.[1] as string;
      const client = await connectV1(url);
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      await client.close();
      expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);

      // A mistake only the type checker sees: reported in the same terminal.
      from = dev.output().length;
      writeFileSync(
        source,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source text, not a template
        edited.replace('return `Hello, ${name}!`;', 'const count: number = name;\n    return `Hello, ${count}!`;'),
      );
      await dev.waitFor(/\[typecheck\]\s+src\/prime-counter\.ts\(\d+,\d+\): error TS2322/, 60_000, from);
      await dev.waitFor(/\[typecheck\]\s+1 type error\b/, 60_000, from);

      // A failed generation stops the server instead of serving the previous glue.
      from = dev.output().length;
      writeFileSync(source, edited.replace('greet(name: string)', 'greet(name: Map<string, string>)'));
      await dev.waitFor(/error MTG1005/, 30_000, from);
      await dev.waitFor(/\[dev\]\s+generation failed: the server is stopped/, 30_000, from);
      expect(await servedTools(dev, 0)).toEqual([]);

      // The save that fixes it serves again.
      from = dev.output().length;
      writeFileSync(source, original);
      await dev.waitFor(
        /mcp-taskgen --watch: wrote src\/__generated__\/tasks\.generated\.ts \(2 tools\)/,
        30_000,
        from,
      );
      await pollUntil(
        () => servedTools(dev, from),
        (names) => names.length > 0,
        30_000,
      );
      expect(await servedTools(dev, from)).toEqual(['count_primes', 'is_prime']);
    } finally {
      await dev.stop();
    }
  }, 240_000);
});
