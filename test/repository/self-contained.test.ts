/**
 * A clone is all it takes: no file of the repository points at files outside it (a sibling
 * checkout, a machine's shared folders), and every test layer has its npm script.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const NOT_OURS = new Set(['node_modules', '.git', 'dist', '.tmp', '.venv', 'coverage']);
/** Written by `npm run docs:build` (gitignored), and rewritten while the site test runs. */
const BUILT = new Set(['docs/api', 'docs/.vitepress/dist', 'docs/.vitepress/cache']);
const TEXT = /\.(ts|mts|mjs|js|json|md|yaml|yml|sh)$|^(Dockerfile|run)$/;

function* repositoryFiles(dir = repoRoot): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (NOT_OURS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (BUILT.has(path.relative(repoRoot, full).split(path.sep).join('/'))) continue;
    if (entry.isDirectory()) yield* repositoryFiles(full);
    else if (TEXT.test(entry.name)) yield full;
  }
}

// Spelled in pieces so this file does not match itself.
const OUTSIDE = [
  ['..', 'shared', ''].join('/'),
  ['shared', 'docs', ''].join('/'),
  ['shared', 'tools', ''].join('/'),
  ['', 'work', ''].join('/'),
];

describe('the repository is self-contained', () => {
  it('refers to no file outside it', () => {
    const found: string[] = [];
    for (const file of repositoryFiles()) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const hit = OUTSIDE.find((pattern) => line.includes(pattern));
          if (hit) found.push(`${path.relative(repoRoot, file)}:${index + 1}: ${hit}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('names no Markdown document that it does not hold', () => {
    const files = [...repositoryFiles()];
    const held = new Set(files.map((file) => path.basename(file)));
    const missing = new Set<string>();
    for (const file of files) {
      for (const [, name] of readFileSync(file, 'utf8').matchAll(/\b([\w-]+\.md)\b/g)) {
        if (!held.has(name!)) missing.add(`${path.relative(repoRoot, file)}: ${name}`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('has an npm script per test layer, and every test file is in one of them', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const layers = [
      'unit',
      'generator',
      'contract',
      'bullmq',
      'e2e',
      'client',
      'observe',
      'fault',
      'examples',
      'conformance',
      'scaffold',
      'docs',
      'package',
    ];
    const folders = layers.flatMap((layer) => {
      const script = scripts[`test:${layer}`] ?? '';
      expect(script, `test:${layer}`).toMatch(/^vitest run \S/);
      return script.replace(/^vitest run /, '').split(' ');
    });
    const outside = [...repositoryFiles()]
      .map((file) => path.relative(repoRoot, file).split(path.sep).join('/'))
      .filter((file) => file.endsWith('.test.ts') && /^(test|src|examples)\//.test(file))
      // Fixtures are the generator's input; template tests run inside scaffolded apps (test/scaffold).
      .filter((file) => !file.startsWith('test/generator/fixtures/'))
      .filter((file) => !folders.some((folder) => file.startsWith(`${folder}/`)));
    expect(outside).toEqual([]);
  });
});
