/**
 * The error-code page and the code table say the same: `docs/guide/error-codes.md` lists every
 * code of `JsonRpcErrorCode` under its name and no other, every HTTP status the MCP front
 * answers with itself, and every client-side code. The error classes follow the naming rule
 * stated at the table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskClientErrorCode } from '../../src/client/errors.js';
import { JsonRpcErrorCode } from '../../src/jsonrpc/json-rpc-error.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const page = readFileSync(path.join(repoRoot, 'docs/guide/error-codes.md'), 'utf8');

/** The body rows of the first table under `## <heading>`, as trimmed cells. */
function tableUnder(heading: string): string[][] {
  const start = page.indexOf(`\n## ${heading}\n`);
  expect(start, `the page has a "## ${heading}" section`).toBeGreaterThanOrEqual(0);
  const section = page.slice(start + 1).split(/\n## /)[0] ?? '';
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  return rows.slice(2).map((row) =>
    row
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim()),
  );
}

const unquote = (cell: string | undefined) => (cell ?? '').replace(/^`|`$/g, '');

describe('docs/guide/error-codes.md', () => {
  const codes = tableUnder('Codes');

  it('names each code as the table does', () => {
    const wrong = codes
      .map(([code, name]) => ({ code: Number(code), name: unquote(name) }))
      .filter(({ code, name }) => JsonRpcErrorCode[name as keyof typeof JsonRpcErrorCode] !== code)
      .map(({ code, name }) => `${code} ${name}`);
    expect(wrong).toEqual([]);
  });

  it('lists every code of the table, and only those', () => {
    const listed = new Set(codes.map(([, name]) => unquote(name)));
    expect([...listed].sort()).toEqual(Object.keys(JsonRpcErrorCode).sort());
  });

  it('gives each row a message, a data column and a cause', () => {
    const incomplete = codes.filter((cells) => cells.length !== 5 || cells.some((cell) => cell.length === 0));
    expect(incomplete).toEqual([]);
  });

  it('lists only codes of the table in its HTTP answers', () => {
    const known = new Set<number>(Object.values(JsonRpcErrorCode));
    const unknown = tableUnder('HTTP answers')
      .map(([, code]) => code ?? '')
      .filter((code) => code !== 'none' && !known.has(Number(code)));
    expect(unknown).toEqual([]);
  });

  it('lists every error status the MCP front answers with itself', () => {
    const frontFiles = ['host/http-front.ts', 'http/json-body.ts', 'host/task-subscriptions.ts', 'http/rate-budget.ts'];
    const emitted = new Set<number>();
    for (const file of frontFiles) {
      const source = readFileSync(path.join(repoRoot, 'src', file), 'utf8');
      for (const match of source.matchAll(/status: (\d{3})|refuse\(\s*(\d{3})|\),?\s*(\d{3}),?\s*\)/g)) {
        const status = Number(match[1] ?? match[2] ?? match[3]);
        if (status >= 400) emitted.add(status);
      }
    }
    expect(emitted.size, 'the scan finds the statuses it looks for').toBeGreaterThan(3);
    const documented = new Set(tableUnder('HTTP answers').map(([status]) => Number(status)));
    expect([...emitted].filter((status) => !documented.has(status)).sort()).toEqual([]);
  });

  it('lists every client-side code, and only those', () => {
    const listed = tableUnder('Client-side codes').map(([code]) => unquote(code));
    expect(listed.sort()).toEqual(Object.values(TaskClientErrorCode).sort());
  });
});

describe('error class names', () => {
  /** Classes thrown to unwind on purpose, named for the state they signal rather than `...Error`. */
  const SIGNALS = new Set(['TaskPaused', 'ChildrenPaused', 'AttemptFailed']);

  function sourceFiles(dir: string): string[] {
    return readdirSync(path.join(repoRoot, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)))
      .filter((file) => !file.includes('__generated__') && !file.startsWith('cli/create-mcp-task-server/'));
  }

  const classes = [...sourceFiles('src'), ...sourceFiles('cli')].flatMap((file) => {
    const source = readFileSync(path.join(repoRoot, file), 'utf8');
    return [...source.matchAll(/class (\w+) extends (\w+)[^{]*\{([\s\S]*?)\n\}/g)].map(([, name, base, body]) => ({
      file,
      name: name as string,
      base: base as string,
      body: body as string,
    }));
  });
  // Error classes: those extending Error, and, transitively, those extending one of them.
  const errorClasses = new Set(['Error']);
  for (let grew = true; grew; ) {
    grew = false;
    for (const { name, base } of classes) {
      if (errorClasses.has(base) && !errorClasses.has(name)) {
        errorClasses.add(name);
        grew = true;
      }
    }
  }
  const errors = classes.filter(({ base }) => errorClasses.has(base));

  it('finds the error classes', () => {
    expect(errors.map(({ name }) => name)).toEqual(
      expect.arrayContaining(['JsonRpcError', 'TaskError', 'TaskClientError']),
    );
  });

  it('end in Error, unless they are signals', () => {
    const misnamed = errors.filter(({ name }) => !name.endsWith('Error') && !SIGNALS.has(name));
    expect(misnamed.map(({ file, name }) => `${file} ${name}`)).toEqual([]);
  });

  it('set `name` to the class name', () => {
    const unnamed = errors.filter(({ name, body }) => !new RegExp(`readonly name(: string)? = '${name}'`).test(body));
    expect(unnamed.map(({ file, name }) => `${file} ${name}`)).toEqual([]);
  });
});
