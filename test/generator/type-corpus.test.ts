/**
 * The type table of the docs page "Tools and types" (`docs/guide/tools-and-types.md`), row by row: each row names tools of the `type-corpus` fixture with
 * values that must be accepted and values that must be rejected, by the JSON Schema (ajv) and the
 * zod schema alike; the generated module must compile with `tsc`. The rows here and the rows on
 * that page must be the same set, so the table cannot promise what no test checks.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitTaskModule, type GenerateResult, generate } from '../../src/generator/index.js';
import {
  FIXTURES,
  fixtureTsconfig,
  type GeneratedFixture,
  loadGeneratedFixture,
  REPO_ROOT,
  removeDir,
  runTsc,
  scratchDir,
  strictAjv,
  TSC_TIMEOUT_MS,
  writeTypeCheckProject,
} from './helpers.js';

const PROJECT_DIR = path.join(FIXTURES, 'type-corpus');
const OUT = path.join(PROJECT_DIR, 'src/__generated__/tasks.generated.ts');

interface Case {
  readonly tool: string;
  /** Whole argument objects; `value(...)` wraps a row's value for the one-parameter tools. */
  readonly accept: readonly unknown[];
  readonly reject: readonly unknown[];
}

const value = (...values: unknown[]) => values.map((item) => ({ value: item }));
/** A lone parameter of object type is the input object itself. */
const bare = (...values: unknown[]) => values;
const point = { x: 1 };

/** Keyed by the first cell of the page's row, exactly as written there. */
const ROWS: Readonly<Record<string, readonly Case[]>> = {
  '`string`, `number`, `boolean`, `null`': [
    { tool: 'string', accept: value('', 'a'), reject: [...value(1, null), {}] },
    { tool: 'number', accept: value(0, -1.5), reject: value('1', null) },
    { tool: 'boolean', accept: value(true, false), reject: value(0, 'true') },
    { tool: 'nullable', accept: value('a', null), reject: [...value(1), {}] },
  ],
  '`Integer`, or `number` with `@integer`': [{ tool: 'integer', accept: value(0, 7, -3), reject: value(1.5, '1') }],
  '`@minLength` `@maxLength` `@pattern` `@format`': [
    { tool: 'constrained', accept: value('ab', 'abcd'), reject: value('a', 'abcde', 'AB', 'a1') },
    { tool: 'format', accept: value('a@example.com'), reject: value('nope', '') },
  ],
  '`@minimum` `@maximum` `@exclusiveMinimum` `@exclusiveMaximum`': [
    { tool: 'bounded', accept: value(1, 9.99), reject: value(0.5, 10, 11) },
  ],
  "`'low' \\| 'high'`": [{ tool: 'string_literals', accept: value('low', 'high'), reject: value('medium', 'LOW') }],
  '`1 \\| 2 \\| true`': [{ tool: 'other_literals', accept: value(1, 2, true), reject: value(3, false, '1') }],
  '`enum Color { ... }`': [{ tool: 'native_enum', accept: value('red', 'green'), reject: value('Red', 'blue') }],
  '`Level.High` (enum members)': [{ tool: 'enum_member', accept: value(2), reject: value(1, 'High') }],
  '`` `user-${number}` ``': [
    { tool: 'template', accept: value('user-1', 'user-2.5'), reject: value('user-', 'user-x', 'x-1') },
  ],
  '`Date`': [
    {
      tool: 'date',
      accept: value('2026-01-02T03:04:05Z', '2026-01-02T03:04:05+02:00'),
      reject: value('2026-01-02', 'now'),
    },
  ],
  '`T[]`, `readonly T[]`, `@minItems` `@maxItems`': [
    { tool: 'array', accept: value([], [1, 2]), reject: value([1, 2, 3], ['1'], 1) },
  ],
  '`[string, ...number[]]`': [{ tool: 'tuple', accept: value(['a'], ['a', 1, 2]), reject: value([], [1], ['a', 'b']) }],
  '`interface`, `{ ... }`, `key?: T`, `@default`': [
    { tool: 'object', accept: bare(point, { x: 1, y: 2 }), reject: bare({}, { y: 1 }, { x: 1, y: '2' }) },
  ],
  '`key: T \\| undefined`': [
    { tool: 'undefined_key', accept: bare({}, { label: 'a' }), reject: bare({ label: 1 }, null) },
  ],
  '`Record<string, V>`, `{ [key: string]: V }`': [
    { tool: 'record', accept: value({}, { a: 1, b: 2 }), reject: value({ a: '1' }, []) },
  ],
  '``Record<`x-${string}`, V>``': [
    { tool: 'template_record', accept: value({}, { 'x-a': 'b' }), reject: value({ a: 'b' }, { 'x-a': 1 }) },
  ],
  "`Record<'us' \\| 'eu', V>`, `Partial<...>`, `Pick<...>`, `{ [K in Mode]: V }`": [
    { tool: 'literal_keys', accept: bare({}, { us: 1, eu: 2 }), reject: bare({ us: 1.5 }, { eu: 'x' }) },
  ],
  'objects tagged by a string literal or a string-enum member': [
    {
      tool: 'string_tagged',
      accept: value({ kind: 'circle', radius: 1 }, { kind: 'square', side: 1 }),
      reject: value({ kind: 'square', radius: 1 }, { kind: 'triangle' }, { radius: 1 }),
    },
    {
      tool: 'other_tagged',
      accept: value({ kind: 'red', note: 'n' }, { kind: 'green' }),
      reject: value({ kind: 'red' }, { kind: 'blue' }),
    },
  ],
  'objects tagged by booleans or numbers': [
    {
      tool: 'other_tagged',
      accept: value({ on: true, level: 1 }, { on: false }),
      reject: value({ on: true }, { on: 'false' }),
    },
  ],
  'other unions': [{ tool: 'union', accept: value('a', [1, 2], null), reject: value(1, ['a'], {}) }],
  '`A & B` of objects': [{ tool: 'intersection', accept: bare({ x: 1, z: 2 }), reject: bare({ x: 1 }, { z: 2 }) }],
  "`string & { __brand: 'UserId' }`": [{ tool: 'brand', accept: value('u1'), reject: value(1, null) }],
  '`Page<Item>`': [
    {
      tool: 'generic',
      accept: bare({ items: [], next: null }, { items: [point], next: 'c' }),
      reject: bare({ items: [{}], next: null }, { items: [] }),
    },
  ],
  'recursion through an interface': [
    {
      tool: 'recursive',
      accept: [
        {
          value: { name: 'a', children: [{ name: 'b', children: [] }] },
          filter: { all: [{ field: 'f' }, { all: [] }] },
        },
      ],
      reject: [
        { value: { name: 'a', children: [{ name: 'b' }] }, filter: { field: 'f' } },
        { value: { name: 'a', children: [] }, filter: { all: [{ field: 1 }] } },
      ],
    },
  ],
  '`unknown`': [{ tool: 'unknown', accept: value(1, 'a', null, { any: [] }), reject: [] }],
};

let result: GenerateResult;
let scratch: string;
let corpus: GeneratedFixture;

beforeAll(async () => {
  result = generate({ tsconfig: fixtureTsconfig('type-corpus'), out: OUT });
  scratch = scratchDir('type-corpus');
  corpus = await loadGeneratedFixture('type-corpus', result.ir, scratch, {
    classModule: 'src/corpus.ts',
    className: 'Corpus',
  });
}, TSC_TIMEOUT_MS);

afterAll(() => removeDir(scratch));

const tool = (name: string) => corpus.tool(name);

/** The first cells of the page's type table, between its markers. */
function pageRows(): string[] {
  const page = readFileSync(path.join(REPO_ROOT, 'docs/guide/tools-and-types.md'), 'utf8');
  const table = page.slice(page.indexOf('<!-- type-table:start -->'), page.indexOf('<!-- type-table:end -->'));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| TypeScript') && !line.startsWith('| ---'))
    .map((line) => (/^\| ((?:[^|\\]|\\\|)+?) \|/.exec(line)?.[1] ?? line).trim());
}

describe('the type table of the docs', () => {
  it('has exactly the rows this corpus checks', () => {
    const rows = pageRows();
    expect(rows.length).toBeGreaterThan(20);
    expect([...rows].sort()).toEqual(Object.keys(ROWS).sort());
  });

  it('generates every corpus tool, warning only about `unknown`', () => {
    expect(result.diagnostics.map((diagnostic) => `${diagnostic.severity} ${diagnostic.code}`)).toEqual([
      'warning MTG1012',
    ]);
    expect(result.ir.tools).toHaveLength(34);
  });

  it(
    'emits a module that compiles, with schemas equal to the source types (tsc)',
    () => {
      const dir = path.join(scratch, 'typecheck');
      mkdirSync(dir);
      const moduleText = emitTaskModule(result.ir, {
        projectDir: PROJECT_DIR,
        outFile: path.join(dir, 'tasks.generated.ts'),
      });
      const tsc = runTsc(writeTypeCheckProject(result.ir, PROJECT_DIR, dir, moduleText));
      expect(tsc.output).toBe('');
      expect(tsc.exitCode).toBe(0);
    },
    TSC_TIMEOUT_MS,
  );

  describe.each(Object.entries(ROWS))('%s', (_row, cases) => {
    it('accepts and rejects the same values in ajv and zod, as the row says', () => {
      const ajv = strictAjv();
      for (const { tool: name, accept, reject } of cases) {
        const definition = tool(name);
        const validate = ajv.compile(definition.inputSchema);
        for (const [sample, expected] of [
          ...accept.map((sample) => [sample, true] as const),
          ...reject.map((sample) => [sample, false] as const),
        ]) {
          const verdicts = { ajv: validate(sample), zod: definition.input.safeParse(sample).success };
          expect({ name, sample, ...verdicts }).toEqual({ name, sample, ajv: expected, zod: expected });
        }
      }
    });
  });
});

describe('the deliberate limits', () => {
  it('keeps input objects open and strips unknown keys; closes output objects', () => {
    const openInput = tool('open_input');
    expect(openInput.inputSchema).not.toHaveProperty('additionalProperties');
    expect(openInput.input.parse({ x: 1, extra: true })).toEqual({ x: 1, y: 0 });
    expect(tool('closed_output').outputSchema).toMatchObject({ additionalProperties: false });
    expect(tool('union_output').outputSchema).toMatchObject({ type: 'object', oneOf: expect.any(Array) });
  });

  it('turns a lone union, Record or Date parameter into a named property', () => {
    for (const name of ['union', 'record', 'lone_date']) {
      expect(Object.keys((tool(name).inputSchema.properties ?? {}) as object)).toEqual([
        name === 'lone_date' ? 'at' : 'value',
      ]);
    }
  });

  it('advertises literal parameter defaults only; the method applies the others', async () => {
    expect(tool('paged').inputSchema).toEqual({
      type: 'object',
      properties: { limit: { type: 'number' }, offset: { type: 'number', default: 0 } },
    });
    expect(await corpus.call('paged', {})).toEqual({ content: [{ type: 'text', text: '10:0' }] });
  });
});
