/**
 * The publishing path, end to end: `npm pack` the framework and the scaffolder, scaffold an app
 * from the scaffolder's tarball (what `npx create-mcp-task-server` runs), point the app's
 * mcp-task-server dependency at the framework's tarball, then install, build and test it the way
 * a user would. `npm run dev` must regenerate and restart on save; with Redis, the app's own
 * server and worker processes complete tasks for a real client.
 *
 * Network: the npm registry only, and `--prefer-offline` lets npm's cache answer. Takes 1-3 minutes.
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
import { type LongRunning, runCommand, startCommand } from './commands.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const INSTALL = ['--prefer-offline', '--no-audit', '--no-fund'];
const LISTENING = /MCP task server listening on (\S+)/;

/** Holds the tarballs and the scaffolded app; outside the repository, so npm sees no workspace around it. */
const work = mkdtempSync(path.join(tmpdir(), 'mcp-task-server-scaffold-'));
const app = path.join(work, 'app');
const timings: string[] = [];
let scaffoldOutput = '';

async function timed(label: string, step: () => Promise<{ output: string; durationMs: number }>) {
  const { output, durationMs } = await step();
  timings.push(`${label} ${(durationMs / 1000).toFixed(1)} s`);
  return output;
}

const npm = (args: string[], cwd: string, timeoutMs: number, env?: Record<string, string>) =>
  runCommand('npm', args, { cwd, timeoutMs, ...(env && { env }) });

beforeAll(async () => {
  // `prepack` builds each package first: the framework's dist/, the scaffolder's dist/ and its copy of templates/.
  await timed('pack mcp-task-server', () => npm(['pack', '--pack-destination', work], repoRoot, 120_000));
  await timed('pack create-mcp-task-server', () =>
    npm(['pack', '--workspace', 'create-mcp-task-server', '--pack-destination', work], repoRoot, 60_000),
  );
  const framework = path.join(work, `mcp-task-server-${version}.tgz`);
  const scaffolder = path.join(work, `create-mcp-task-server-${version}.tgz`);
  expect(existsSync(framework), framework).toBe(true);
  expect(existsSync(scaffolder), scaffolder).toBe(true);
  expect(existsSync(path.join(repoRoot, 'cli/create-mcp-task-server/templates')), 'postpack removes the copy').toBe(
    false,
  );

  scaffoldOutput = await timed('npm exec create-mcp-task-server', () =>
    npm(['exec', '--yes', ...INSTALL, `--package=${scaffolder}`, '--', 'create-mcp-task-server', 'app'], work, 60_000),
  );
  // What the registry would provide once published: the framework from its tarball.
  const manifestPath = path.join(app, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.dependencies['mcp-task-server'] = `file:${framework}`;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  await timed('npm install', () => npm(['install', ...INSTALL], app, 180_000));
}, 300_000);

afterAll(() => {
  console.info(`scaffold timings: ${timings.join(', ')}`);
  rmSync(work, { recursive: true, force: true });
});

describe('a scaffolded app, installed from the packed tarballs', () => {
  it('was written by the packed scaffolder, with .gitignore and the next steps', () => {
    expect(scaffoldOutput).toContain('Next steps:\n  cd app\n  npm install\n  npm run dev\n');
    expect(existsSync(path.join(app, '.gitignore'))).toBe(true);
    expect(JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')).name).toBe('app');
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
    expect(output).not.toMatch(/failed|skipped/);
  }, 180_000);
});

describeWithRedis('the scaffolded app on Redis: its server and worker processes', () => {
  const prefix = `mcpt-scaffold-${randomBytes(6).toString('hex')}`;
  const env = { REDIS_URL, REDIS_PREFIX: prefix, PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' };
  let server: LongRunning;
  let worker: LongRunning;
  let client: Client;

  beforeAll(async () => {
    server = startCommand('npm', ['start'], { cwd: app, env: { ...env, WORKERS: '0' } });
    worker = startCommand('npm', ['run', 'worker'], { cwd: app, env });
    const [listening] = await Promise.all([
      server.waitFor(LISTENING, 30_000),
      worker.waitFor(/MCP task worker running/, 30_000),
    ]);
    client = await connectV1(listening[1] as string, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { start: true } }));
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
    await pollUntil(
      () => client.experimental.tasks.getTask(taskId),
      (task) => task.status === 'input_required',
      30_000,
    );
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual({ below: 2_000_000, count: 148_933, largest: 1_999_993 });
  }, 60_000);
});

describe('npm run dev', () => {
  /** The tool names served by the most recently started server, or none while it restarts. */
  async function servedTools(dev: LongRunning, from: number): Promise<string[]> {
    const url = [...dev.output().slice(from).matchAll(new RegExp(LISTENING, 'g'))].at(-1)?.[1];
    if (!url) return [];
    try {
      const client = await connectV1(url);
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
