/**
 * The import rules of `npm run lint` (`.dependency-cruiser.cjs`) still bite: the checker runs on
 * a small tree with one forbidden import per rule and must name each one, and on the same tree
 * without them it must find nothing. A rule whose paths stop matching (a renamed folder, a typo)
 * fails here instead of passing silently. Last, the repository itself has no violation.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const configFile = path.join(repoRoot, '.dependency-cruiser.cjs');
const depcruise = path.join(repoRoot, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const run = promisify(execFile);

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

/** Runs the lint's checker in `cwd` on `targets`; resolves with what it reports. */
async function check(cwd: string, targets: readonly string[]): Promise<Violation[]> {
  const { stdout } = await run(
    process.execPath,
    [depcruise, '--config', configFile, '--output-type', 'json', ...targets],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    // It exits non-zero when it finds violations; the report is still on stdout.
    if (error.stdout) return { stdout: error.stdout };
    throw new Error(`dependency-cruiser failed: ${error.stderr}`);
  });
  const report = JSON.parse(stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  return report.summary.violations.map((found) => ({ rule: found.rule.name, from: found.from, to: found.to }));
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A tree of files in a fresh directory, with the repository's packages beside it. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
  made.push(dir);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

const leaf = 'export const value = 1;\n';
const importing = (...specifiers: string[]) =>
  `${specifiers.map((specifier, index) => `import * as m${index} from '${specifier}';`).join('\n')}\nexport const used = [${specifiers.map((_, index) => `m${index}`).join(', ')}];\n`;

/** Every layer importing what it may, so the legal shape is checked too. */
const LEGAL: Record<string, string> = {
  'src/jsonrpc/json-rpc-error.ts': leaf,
  'src/decorators/marks.ts': leaf,
  'src/engine/task.ts': leaf,
  'src/engine/engine.ts': importing('./task.js', '../jsonrpc/json-rpc-error.js', 'node:crypto'),
  'src/observe/logger.ts': leaf,
  'src/observe/tracing.ts': importing('@opentelemetry/api'),
  'src/observe/log.ts': importing('../engine/task.js', './logger.js', 'pino'),
  'src/tools/registry.ts': importing(
    '../decorators/marks.js',
    '../engine/engine.js',
    '../observe/logger.js',
    '../observe/tracing.js',
  ),
  'src/runtime/memory/memory-runtime.ts': importing('../../engine/engine.js', '../../observe/tracing.js'),
  'src/runtime/bullmq/runtime.ts': importing('../../engine/engine.js', '../../observe/log.js', 'bullmq', 'ioredis'),
  'src/protocol/rpc-error.ts': leaf,
  'src/protocol/tasks-2025.ts': importing('../engine/engine.js', '../tools/registry.js', './rpc-error.js'),
  'src/http/json-body.ts': importing('../protocol/rpc-error.js'),
  'src/dashboard/routes.ts': importing('../engine/engine.js', '../http/json-body.js', '../protocol/rpc-error.js'),
  'src/host/task-server.ts': importing(
    '../dashboard/routes.js',
    '../runtime/bullmq/runtime.js',
    '../runtime/memory/memory-runtime.js',
    '../protocol/tasks-2025.js',
    '../http/json-body.js',
    '@modelcontextprotocol/server',
  ),
  'src/client/index.ts': importing('@modelcontextprotocol/client'),
  'src/testing/harness.ts': importing('../client/index.js', '../host/task-server.js'),
  'src/generator/cli.ts': leaf,
  'src/index.ts': importing('./host/task-server.js', './tools/registry.js'),
  'src/manifest/index.ts': importing('../tools/registry.js'),
  'cli/task/output.ts': leaf,
  'cli/task/program.ts': importing('../../src/client/index.js', './output.js'),
  'cli/mcp-task.ts': importing('./task/program.js'),
  'cli/mcp-taskgen.ts': importing('../src/generator/cli.js'),
  'cli/create-mcp-task-server/src/index.ts': leaf,
  'templates/template-minimal/src/server.ts': `export class Kitchen {}\nvoid import('./__generated__/tasks.generated.js');\n`,
  'templates/template-minimal/src/__generated__/tasks.generated.ts': importing('../server.js'),
  'test/support.ts': importing('../src/index.js'),
};

/** One forbidden import per rule: the file, what it imports, and the rule that must name it. */
const FORBIDDEN: { rule: string; file: string; imports: string; to?: string }[] = [
  { rule: 'layer-jsonrpc', file: 'src/jsonrpc/to-engine.ts', imports: '../engine/task.js' },
  { rule: 'layer-manifest-entry', file: 'src/manifest/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-engine', file: 'src/engine/to-protocol.ts', imports: '../protocol/rpc-error.js' },
  { rule: 'layer-engine', file: 'src/engine/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-engine', file: 'src/engine/to-runtime.ts', imports: '../runtime/bullmq/runtime.js' },
  { rule: 'layer-engine', file: 'src/engine/to-observe.ts', imports: '../observe/log.js' },
  { rule: 'packages-engine', file: 'src/engine/to-sdk.ts', imports: '@modelcontextprotocol/server' },
  { rule: 'packages-engine', file: 'src/engine/to-redis.ts', imports: 'ioredis' },
  { rule: 'packages-engine', file: 'src/engine/to-unknown.ts', imports: 'no-such-package-anywhere' },
  { rule: 'layer-tools', file: 'src/tools/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-tools', file: 'src/tools/to-protocol.ts', imports: '../protocol/rpc-error.js' },
  { rule: 'layer-tools', file: 'src/tools/to-log-backend.ts', imports: '../observe/log.js' },
  { rule: 'packages-tools', file: 'src/tools/to-pino.ts', imports: 'pino' },
  { rule: 'layer-client', file: 'src/client/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-client', file: 'src/client/to-engine.ts', imports: '../engine/task.js' },
  { rule: 'layer-client', file: 'src/client/to-protocol.ts', imports: '../protocol/rpc-error.js' },
  { rule: 'packages-client', file: 'src/client/to-server-sdk.ts', imports: '@modelcontextprotocol/server' },
  { rule: 'layer-runtime-memory', file: 'src/runtime/memory/to-bullmq.ts', imports: '../bullmq/runtime.js' },
  { rule: 'layer-runtime-memory', file: 'src/runtime/memory/to-protocol.ts', imports: '../../protocol/rpc-error.js' },
  { rule: 'packages-runtime-memory', file: 'src/runtime/memory/to-redis.ts', imports: 'bullmq' },
  { rule: 'layer-runtime-bullmq', file: 'src/runtime/bullmq/to-memory.ts', imports: '../memory/memory-runtime.js' },
  { rule: 'layer-runtime-bullmq', file: 'src/runtime/bullmq/to-host.ts', imports: '../../host/task-server.js' },
  { rule: 'layer-protocol', file: 'src/protocol/to-runtime.ts', imports: '../runtime/bullmq/runtime.js' },
  { rule: 'layer-protocol', file: 'src/protocol/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'packages-protocol', file: 'src/protocol/to-redis.ts', imports: 'ioredis' },
  { rule: 'layer-observe', file: 'src/observe/to-tools.ts', imports: '../tools/registry.js' },
  { rule: 'layer-decorators', file: 'src/decorators/to-engine.ts', imports: '../engine/task.js' },
  { rule: 'layer-http', file: 'src/http/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-dashboard', file: 'src/dashboard/to-host.ts', imports: '../host/task-server.js' },
  { rule: 'layer-host', file: 'src/host/to-testing.ts', imports: '../testing/harness.js' },
  { rule: 'layer-testing', file: 'src/testing/to-bullmq.ts', imports: '../runtime/bullmq/runtime.js' },
  { rule: 'layer-generator', file: 'src/generator/to-engine.ts', imports: '../engine/task.js' },
  { rule: 'layer-root-entry', file: 'src/index.ts', imports: './client/index.js', to: 'src/client/index.ts' },
  { rule: 'layer-cli-task', file: 'cli/task/to-protocol.ts', imports: '../../src/protocol/rpc-error.js' },
  { rule: 'layer-cli-task-bin', file: 'cli/mcp-task.ts', imports: '../src/host/task-server.js' },
  { rule: 'layer-cli-taskgen-bin', file: 'cli/mcp-taskgen.ts', imports: '../src/engine/task.js' },
  { rule: 'layer-scaffolder', file: 'cli/create-mcp-task-server/src/to-root.ts', imports: '../../../src/index.js' },
  { rule: 'layer-unlisted', file: 'src/newfolder/thing.ts', imports: '../engine/task.js' },
];

/** Forbidden shapes that take more than one file. */
const CIRCLES: Record<string, string> = {
  // A type-only circle inside one folder.
  'src/engine/circle-a.ts': "import type { B } from './circle-b.js';\nexport interface A { b?: B }\n",
  'src/engine/circle-b.ts': "import type { A } from './circle-a.js';\nexport interface B { a?: A }\n",
  // A circle among tests.
  'test/circle-a.ts': importing('./circle-b.js'),
  'test/circle-b.ts': importing('./circle-a.js'),
  // A template circle closed by static imports only.
  'templates/template-default/src/a.ts': importing('./b.js'),
  'templates/template-default/src/b.ts': importing('./a.js'),
  // Two folders of one layer importing each other, with no module circle.
  'src/generator/emit/zod.ts': importing('../reader/walk.js'),
  'src/generator/reader/walk.ts': importing('../emit/names.js'),
  'src/generator/emit/names.ts': leaf,
};

const TARGETS = ['src', 'cli', 'test', 'templates'];

describe('the import rules of npm run lint', () => {
  it('find nothing in a tree where every layer imports only what it may', async () => {
    expect(await check(tree(LEGAL), TARGETS)).toEqual([]);
  }, 60_000);

  it('name each forbidden import and each circle, and every rule of the config fires', async () => {
    const files: Record<string, string> = { ...LEGAL, ...CIRCLES };
    for (const { file, imports } of FORBIDDEN) {
      files[file] =
        file in LEGAL
          ? `${LEGAL[file]}import * as extra from '${imports}';\nexport const alsoUsed = extra;\n`
          : importing(imports);
    }
    const found = await check(tree(files), TARGETS);
    const has = (rule: string, from: string, to?: string) =>
      found.some((one) => one.rule === rule && one.from === from && (to === undefined || one.to === to));

    const missing = FORBIDDEN.filter(({ rule, file, to }) => !has(rule, file, to)).map(
      ({ rule, file, imports }) => `${rule}: ${file} → ${imports}`,
    );
    expect(missing).toEqual([]);
    expect(has('no-circular', 'src/engine/circle-a.ts')).toBe(true);
    expect(has('no-circular', 'test/circle-a.ts')).toBe(true);
    expect(has('no-circular-templates', 'templates/template-default/src/a.ts')).toBe(true);
    // The legal template circle, closed by a dynamic import, stays legal.
    expect(found.filter((one) => one.from.startsWith('templates/template-minimal/'))).toEqual([]);
    expect(has('no-circular-folders', 'src/generator/emit')).toBe(true);

    const rules = (createRequire(import.meta.url)(configFile) as { forbidden: { name: string }[] }).forbidden;
    const fired = new Set(found.map((one) => one.rule));
    expect(rules.map((rule) => rule.name).filter((name) => !fired.has(name))).toEqual([]);
  }, 60_000);

  it('find nothing in the repository', async () => {
    expect(await check(repoRoot, ['src', 'cli', 'test', 'bench', 'examples', 'scripts', 'templates'])).toEqual([]);
  }, 60_000);
});
