/**
 * The typed client `mcp-taskgen --client` writes, for the repo-scan example:
 * - compiled by `tsc` in another package that has only the generated file and
 *   `mcp-task-server/client` (a wrong argument type must be a compile error);
 * - run against the example's server in both dialects, every tool, results decoded to the
 *   declared types.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { taskManifest } from '../../examples/repo-scan/src/__generated__/tasks.generated.js';
import { RepoScanner } from '../../examples/repo-scan/src/repo-scanner.js';
import { TaskClientError } from '../../src/client/index.js';
import { generate, writeGenerated } from '../../src/generator/index.js';
import { type RunningServer, startServer } from '../e2e/support.js';
import { clientSpec, createClient } from './typed-fixture/src/__generated__/repo-scan.client.js';
import { useEveryTool } from './typed-fixture/src/use.js';

// Some tests start a server process or a compiler; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 60_000 });

const repoRoot = path.resolve(import.meta.dirname, '../..');
const fixture = path.join(import.meta.dirname, 'typed-fixture');
let scan: RunningServer;
let workspace: string;

beforeAll(async () => {
  workspace = await mkdtemp(path.join(repoRoot, '.tmp-typed-'));
  await mkdir(path.join(workspace, 'src', 'dist'), { recursive: true });
  await writeFile(path.join(workspace, 'src', 'a.ts'), 'export const a = 1;\n');
  scan = await startServer({ manifest: taskManifest, instances: [new RepoScanner(workspace)] });
});

afterAll(async () => {
  await scan?.close();
  await rm(workspace, { recursive: true, force: true });
});

describe('compiled in another package', () => {
  it('type-checks every call, and rejects wrong argument, answer and result types', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'typed-client-'));
    try {
      await cp(fixture, dir, { recursive: true });
      // The package sees mcp-task-server as an installed dependency, through its exports map.
      await mkdir(path.join(dir, 'node_modules'), { recursive: true });
      await symlink(repoRoot, path.join(dir, 'node_modules', 'mcp-task-server'), 'dir');
      await symlink(path.join(repoRoot, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'), 'dir');
      const tsc = path.join(repoRoot, 'node_modules', '.bin', 'tsc');
      // The source condition stands in for the compiled dist/ the published package carries.
      const run = await promisify(execFile)(tsc, ['-p', dir, '--customConditions', 'mcp-task-server-source'], {
        cwd: dir,
      }).catch((error: { stdout: string; stderr: string; code: number }) => error);
      expect(`${run.stdout}${run.stderr}`).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails to compile when an @ts-expect-error line becomes valid (the check can fail)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'typed-client-'));
    try {
      await cp(fixture, dir, { recursive: true });
      await mkdir(path.join(dir, 'node_modules'), { recursive: true });
      await symlink(repoRoot, path.join(dir, 'node_modules', 'mcp-task-server'), 'dir');
      await symlink(path.join(repoRoot, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'), 'dir');
      await writeFile(
        path.join(dir, 'src', 'extra.ts'),
        "import { createClient } from './__generated__/repo-scan.client.js';\n" +
          "// @ts-expect-error\nawait createClient('http://x').scanRepository({ path: '.' });\n",
      );
      const tsc = path.join(repoRoot, 'node_modules', '.bin', 'tsc');
      const run = await promisify(execFile)(tsc, ['-p', dir, '--customConditions', 'mcp-task-server-source'], {
        cwd: dir,
      }).catch((error: { stdout: string; stderr: string }) => error);
      expect(`${run.stdout}${run.stderr}`).toMatch(/extra\.ts.*Unused '@ts-expect-error' directive/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('for every type the generator supports', () => {
  it('writes a client that compiles on its own (dates, enums, brands, unions, recursion)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'typed-all-types-'));
    try {
      const project = path.join(repoRoot, 'test/generator/fixtures/all-types/tsconfig.json');
      const client = path.join(dir, 'src', 'client.ts');
      const result = generate({ tsconfig: project, out: path.join(dir, 'tasks.generated.ts'), client });
      expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      writeGenerated(new Map([...result.files].filter(([file]) => file === client)));
      await cp(path.join(fixture, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
      await writeFile(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
      await mkdir(path.join(dir, 'node_modules'), { recursive: true });
      await symlink(repoRoot, path.join(dir, 'node_modules', 'mcp-task-server'), 'dir');
      await symlink(path.join(repoRoot, 'node_modules', '@types'), path.join(dir, 'node_modules', '@types'), 'dir');
      const tsc = path.join(repoRoot, 'node_modules', '.bin', 'tsc');
      const run = await promisify(execFile)(tsc, ['-p', dir, '--customConditions', 'mcp-task-server-source'], {
        cwd: dir,
      }).catch((error: { stdout: string; stderr: string }) => error);
      expect(`${run.stdout}${run.stderr}`).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.each(['2026', '2025'] as const)('against the repo-scan server, dialect %s', (dialect) => {
  it('calls every tool, answering the typed question, and decodes each result', async () => {
    const outcome = await useEveryTool(scan.url, { dialect });
    expect(outcome.files).toBe(1);
    expect(outcome.largest).toBe('src/a.ts');
    expect(outcome.freed).toBe(0);
    expect(outcome.directories).toEqual(['src']);
  });

  it('rejects a result that does not fit the declared type, and a tool error', async () => {
    const client = createClient(scan.url, { dialect });
    try {
      const listing = await client.listDirectories();
      await expect(listing.result()).resolves.toEqual({ directories: ['src'] });
      const missing = await client.scanRepository({ path: 'no/such/dir' });
      const error = await missing.result().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TaskClientError);
      expect(error).toMatchObject({ code: 'tool_error' });
    } finally {
      await client.close();
    }
  });
});

it('validates results with the schema of the declared type', () => {
  const decode = clientSpec.scanRepository.output;
  expect(decode.safeParse({ path: '.', files: 1.5, lines: 0, bytes: 0, byExtension: [], largest: [] }).success).toBe(
    false,
  );
});
