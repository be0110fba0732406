/**
 * `@Task` and `@Tool` work under both decorator modes: the library and the repo-scan example
 * are compiled with `tsc` once with TC39 standard decorators and once with
 * `experimentalDecorators`, and each build is started and driven over stdio by the v1 client.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generator/index.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const buildRoot = path.join(repoRoot, '.tmp', 'decorator-modes');

afterAll(() => rm(buildRoot, { recursive: true, force: true }));

async function build(mode: 'standard' | 'legacy'): Promise<string> {
  const dir = path.join(buildRoot, mode);
  const out = path.join(dir, 'out');
  await mkdir(out, { recursive: true });
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../../tsconfig.build.json',
      compilerOptions: {
        rootDir: '../../..',
        outDir: './out',
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        experimentalDecorators: mode === 'legacy',
      },
      include: ['../../../src', '../../../examples/repo-scan'],
      exclude: ['../../../**/*.test.ts'],
    }),
  );
  // The build is its own copy of the package, so `mcp-task-server` resolves to it.
  await writeFile(
    path.join(out, 'package.json'),
    JSON.stringify({
      name: 'mcp-task-server',
      type: 'module',
      exports: { '.': './src/index.js', './manifest': './src/manifest/index.js' },
    }),
  );
  const tsc = spawnSync(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr, `tsc (${mode}) failed`).toBe('');
  expect(tsc.status).toBe(0);
  return path.join(out, 'examples/repo-scan/server.js');
}

describe('mcp-taskgen and the decorator mode', () => {
  it('generates the same bytes whichever mode the project compiles with', async () => {
    const exampleDir = path.join(repoRoot, 'examples/repo-scan');
    const legacyConfig = path.join(exampleDir, 'tsconfig.legacy-check.json');
    await writeFile(
      legacyConfig,
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: { experimentalDecorators: true } }),
    );
    try {
      const out = path.join(exampleDir, 'src/__generated__/tasks.generated.ts');
      const standard = generate({ tsconfig: path.join(exampleDir, 'tsconfig.json'), out });
      const legacy = generate({ tsconfig: legacyConfig, out });
      expect(standard.diagnostics).toEqual([]);
      expect(legacy.diagnostics).toEqual([]);
      expect([...legacy.files.values()]).toEqual([...standard.files.values()]);
      expect(standard.files.get(out)).toBe(await readFile(out, 'utf8'));
    } finally {
      await rm(legacyConfig, { force: true });
    }
  }, 60_000);
});

describe.each(['standard', 'legacy'] as const)('decorators compiled by tsc in %s mode', (mode) => {
  it('serve a working task server', async () => {
    const entry = await build(mode);
    // A client that drives tasks says so: it sees the tools as they are, without companion tools.
    const client = new Client({ name: `decorators-${mode}`, version: '1.0.0' }, { capabilities: { tasks: {} } });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [entry, '--stdio'],
        cwd: repoRoot,
        env: { ...(process.env as Record<string, string>), SCAN_ROOT: repoRoot, MCP_TASK_LOG_LEVEL: 'warn' },
        stderr: 'inherit',
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'clean_build_outputs',
        'list_directories',
        'scan_repository',
      ]);
      const created = await client.request(
        { method: 'tools/call', params: { name: 'scan_repository', arguments: { path: 'src/decorators' }, task: {} } },
        CreateTaskResultSchema,
      );
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      // The scan counts the folder as it is, whatever files it holds.
      const files = (await readdir(path.join(repoRoot, 'src/decorators'), { withFileTypes: true })).filter((entry) =>
        entry.isFile(),
      ).length;
      expect(result.structuredContent).toMatchObject({ path: 'src/decorators', files });
    } finally {
      await client.close();
    }
  }, 60_000);
});
