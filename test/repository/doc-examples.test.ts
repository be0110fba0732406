/**
 * The `@example` of a public export is code a reader copies, so it must compile against the
 * package as it is. Every example written as a whole module (it has an `import`) is written
 * into a scratch app next to a small one of its own (a `Reports` and a `Deployer` class with
 * their generated manifest, which the examples import), and `tsc` checks them all together.
 * The entry points people start from must have such an example.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Node, Project } from 'ts-morph';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/generator/index.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The same list as the doc-comment test: these examples must be whole modules. */
const NEEDS_EXAMPLE = [
  'createTaskServer',
  'runTaskServer',
  'createTaskWorker',
  'Task',
  'NeedsInput',
  'Tool',
  'TaskContext',
  'connectTaskClient',
  'createTestHarness',
];

const entryPoints = Object.values(
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).exports as Record<
    string,
    string | Record<string, string>
  >,
).flatMap((target) =>
  typeof target === 'object' && target['mcp-task-server-source']
    ? [path.join(repoRoot, target['mcp-task-server-source'])]
    : [],
);

/**
 * A doc comment's text as written, without its `/**`, `*\/` and line stars. Read from the source
 * rather than from the parsed tags: the JSDoc parser takes a decorator at the start of a line in
 * a code block (`@Task()`) for a tag, and drops the indentation.
 */
function rawText(comment: string): string {
  return comment
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s*\/\*\*\s?/, '')
        .replace(/\s*\*\/\s*$/, '')
        .replace(/^\s*\* ?/, ''),
    )
    .join('\n');
}

interface Example {
  readonly symbol: string;
  readonly where: string;
  readonly code: string;
}

function examplesOf(): Example[] {
  const project = new Project({
    tsConfigFilePath: path.join(repoRoot, 'tsconfig.json'),
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
  });
  const seen = new Set<Node>();
  const examples: Example[] = [];
  for (const entry of entryPoints) {
    const source = project.addSourceFileAtPath(entry);
    project.resolveSourceFileDependencies();
    for (const [symbol, declarations] of source.getExportedDeclarations()) {
      for (const declaration of declarations) {
        const holder = Node.isVariableDeclaration(declaration) ? declaration.getVariableStatement() : declaration;
        if (!holder || seen.has(holder) || !Node.isJSDocable(holder)) continue;
        seen.add(holder);
        for (const doc of holder.getJsDocs()) {
          for (const fenced of rawText(doc.getText()).matchAll(/^@example\n```ts\n([\s\S]*?)\n```/gm)) {
            examples.push({
              symbol,
              where: `${path.relative(repoRoot, holder.getSourceFile().getFilePath())}:${holder.getStartLineNumber()}`,
              // A doc comment cannot hold `*/`: examples write it `*\/`.
              code: `${(fenced[1] ?? '').replaceAll('*\\/', '*/')}\n`,
            });
          }
        }
      }
    }
  }
  return examples;
}

const examples = examplesOf();
const modules = examples.filter((example) => /^import /m.test(example.code));

/** The app the examples import: what `./reports.js`, `./deployer.js` and the manifest stand for. */
const APP = {
  'src/reports.ts': `import { Task, type TaskContext, Tool } from 'mcp-task-server';

export class Reports {
  /** Builds the quarterly report. */
  @Task()
  async buildReport(quarter: string, ctx: TaskContext): Promise<{ url: string }> {
    ctx.progress(\`building \${quarter}\`);
    return { url: \`https://reports.example.com/\${quarter}.pdf\` };
  }

  /** Lists the quarters a report can be built for. */
  @Tool()
  async listQuarters(): Promise<string[]> {
    return ['2026-Q1'];
  }
}
`,
  'src/deployer.ts': `import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';

export class Deployer {
  /** Deploys a service once someone approves. */
  @Task()
  @NeedsInput<{ approve: boolean }>('approval', { message: 'Deploy?' })
  async deploy(service: string, ctx: TaskContext<{ approval: { approve: boolean } }>): Promise<{ deployed: boolean }> {
    const approval = await ctx.input('approval');
    return { deployed: approval.action === 'accept' && approval.content.approve && service.length > 0 };
  }
}
`,
};

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    customConditions: ['mcp-task-server-source'],
    lib: ['ES2023', 'DOM'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
  },
  include: ['src', 'test'],
};

describe('the @example of each public export', () => {
  // Inside the package, so that `mcp-task-server` resolves to its source as it does for the examples.
  const parent = path.join(repoRoot, 'test/repository/.tmp');
  mkdirSync(parent, { recursive: true });
  const scratch = mkdtempSync(path.join(parent, 'doc-examples-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('is a whole module for each entry point people start from', () => {
    const whole = new Set(modules.map((example) => example.symbol));
    expect(NEEDS_EXAMPLE.filter((symbol) => !whole.has(symbol))).toEqual([]);
  });

  it('compiles against the package', { timeout: 120_000 }, () => {
    for (const [file, text] of Object.entries(APP)) {
      mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
      writeFileSync(path.join(scratch, file), text);
    }
    writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    const generated = generate({
      cwd: scratch,
      tsconfig: 'tsconfig.json',
      out: 'src/__generated__/tasks.generated.ts',
      include: Object.keys(APP),
    });
    expect(generated.diagnostics).toEqual([]);
    for (const [file, text] of generated.files) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    }

    const written = new Map<string, Example>();
    modules.forEach((example, index) => {
      // An example that imports `../src/...` is a test file of the app; the others sit in `src/`.
      const dir = example.code.includes("from '../src/") ? 'test' : 'src';
      const file = path.join(dir, `example-${index}-${example.symbol}.ts`);
      mkdirSync(path.join(scratch, dir), { recursive: true });
      writeFileSync(path.join(scratch, file), example.code);
      written.set(file, example);
    });
    expect(written.size).toBeGreaterThanOrEqual(NEEDS_EXAMPLE.length);

    const tsc = spawnSync(
      path.join(repoRoot, 'node_modules/.bin/tsc'),
      ['--noEmit', '--pretty', 'false', '-p', path.join(scratch, 'tsconfig.json')],
      { cwd: scratch, encoding: 'utf8' },
    );
    // Name the example behind each error by its symbol and where its doc comment is.
    const output = `${tsc.stdout}${tsc.stderr}`.replace(/(?:src|test)\/example-\d+-\w+\.ts/g, (file) => {
      const example = written.get(file);
      return example ? `${file} (the @example of ${example.symbol} at ${example.where})` : file;
    });
    expect(output).toBe('');
    expect(tsc.status).toBe(0);
  });
});
