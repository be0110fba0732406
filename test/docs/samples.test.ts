/**
 * Every code sample a reader can copy compiles. Samples live as regions of the files under
 * `docs/snippets/`, which `npm run typecheck` compiles; the site includes them with
 * `<<< @/snippets/file.ts#region`. The README cannot include files, so each of its `ts` blocks
 * must be, character for character, one of those regions; and no page of the site may carry a
 * TypeScript block of its own, which nothing would compile.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const docs = path.join(repoRoot, 'docs');
const snippetsDir = path.join(docs, 'snippets');

/** `// #region name` ... `// #endregion name`, as VitePress cuts them: the lines between, dedented. */
function regions(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(/^[ \t]*\/\/ #region (\S+)\n([\s\S]*?)^[ \t]*\/\/ #endregion \1$/gm)) {
    const lines = (match[2] as string).replace(/\n$/, '').split('\n');
    const indent = Math.min(...lines.filter((line) => line.trim()).map((line) => /^ */.exec(line)?.[0].length ?? 0));
    found.set(match[1] as string, lines.map((line) => line.slice(indent)).join('\n'));
  }
  return found;
}

function files(dir: string, extension: string, skip: (relative: string) => boolean = () => false): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(extension) && !skip(name))
    .map((name) => path.join(dir, name));
}

const snippetRegions = files(snippetsDir, '.ts').flatMap((file) =>
  [...regions(readFileSync(file, 'utf8'))].map(([name, text]) => ({
    where: `${path.relative(docs, file)}#${name}`,
    text,
  })),
);

/** The fenced blocks of a Markdown text in the given languages. */
function fencedBlocks(markdown: string, languages: readonly string[]): string[] {
  return [...markdown.matchAll(/^```(\w+)[^\n]*\n([\s\S]*?)^```$/gm)]
    .filter((match) => languages.includes(match[1] as string))
    .map((match) => (match[2] as string).replace(/\n$/, ''));
}

describe('code samples', () => {
  it('finds the snippet regions', () => {
    expect(snippetRegions.length).toBeGreaterThan(10);
  });

  const readmeBlocks = fencedBlocks(readFileSync(path.join(repoRoot, 'README.md'), 'utf8'), ['ts', 'typescript']);

  it('the README has TypeScript samples', () => {
    expect(readmeBlocks.length).toBeGreaterThanOrEqual(3);
  });

  it.each(readmeBlocks.map((block, index) => [index + 1, block]))(
    'README sample %i is a region of a type-checked snippet',
    (_index, block) => {
      expect(snippetRegions.map((region) => region.text)).toContain(block);
    },
  );

  it('no page of the site carries a TypeScript block that is not an included snippet', () => {
    const generated = (relative: string) => relative.startsWith('api/') || relative.startsWith('.vitepress/');
    const offending = files(docs, '.md', generated).filter(
      (file) => fencedBlocks(readFileSync(file, 'utf8'), ['ts', 'typescript', 'tsx', 'js', 'javascript']).length > 0,
    );
    expect(offending.map((file) => path.relative(repoRoot, file))).toEqual([]);
  });

  it('every snippet a page includes exists, with its region', () => {
    const missing: string[] = [];
    for (const page of files(docs, '.md', (relative) => relative.startsWith('api/'))) {
      for (const match of readFileSync(page, 'utf8').matchAll(/^\s*<<< @\/(\S+?\.ts)(?:#(\S+?))?(?:\{[^}]*\})?$/gm)) {
        const file = path.join(docs, match[1] as string);
        const source = (() => {
          try {
            return readFileSync(file, 'utf8');
          } catch {
            return undefined;
          }
        })();
        if (source === undefined || (match[2] && !regions(source).has(match[2]))) {
          missing.push(`${path.relative(docs, page)}: ${match[0].trim()}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
