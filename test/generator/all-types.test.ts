/**
 * Every supported type construct, JSDoc tag and result shape, in one fixture: pinned IR and
 * module, determinism, the compiled two-way type check, JSON Schema (ajv) and zod agreeing on
 * sample arguments, and the generated module's behaviour at run time.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitTaskModule, type GenerateResult, generate } from '../../src/generator/index.js';
import { toCallToolResult } from '../../src/tools/result.js';
import {
  FIXTURES,
  fixtureTsconfig,
  type GeneratedFixture,
  loadGeneratedFixture,
  removeDir,
  runTsc,
  scratchDir,
  strictAjv,
  TSC_TIMEOUT_MS,
  writeTypeCheckProject,
} from './helpers.js';

const PROJECT_DIR = path.join(FIXTURES, 'all-types');
const OUT = path.join(PROJECT_DIR, 'src/__generated__/tasks.generated.ts');

let result: GenerateResult;
let generated: string;
let scratch: string;

beforeAll(() => {
  result = generate({ tsconfig: fixtureTsconfig('all-types'), out: OUT });
  generated = result.files.get(OUT) ?? '';
  scratch = scratchDir('all-types');
});

afterAll(() => removeDir(scratch));

function moduleIn(dir: string): string {
  return emitTaskModule(result.ir, { projectDir: PROJECT_DIR, outFile: path.join(dir, 'tasks.generated.ts') });
}

describe('all-types fixture', () => {
  it('reads with only the warnings for `unknown`', () => {
    expect(
      result.diagnostics.map((diagnostic) => `${diagnostic.severity} ${diagnostic.code} ${diagnostic.message}`),
    ).toEqual([
      "warning MTG1012 parameter 'payload' of Catalog.echo: 'unknown' accepts any JSON value; the schema is {} and nothing is validated",
      "warning MTG1012 return type of Catalog.echo: 'unknown' accepts any JSON value; the schema is {} and nothing is validated",
    ]);
    expect(result.files.size).toBe(1);
  });

  it('produces the pinned IR', async () => {
    expect(JSON.parse(JSON.stringify(result.ir))).toEqual(result.ir);
    await expect(`${JSON.stringify(result.ir, null, 2)}\n`).toMatchFileSnapshot(
      path.join(PROJECT_DIR, 'expected/ir.json'),
    );
  });

  it('emits the pinned module', async () => {
    await expect(generated).toMatchFileSnapshot(OUT);
  });

  it('is byte-identical when generated twice', () => {
    const again = generate({ tsconfig: fixtureTsconfig('all-types'), out: OUT });
    expect(again.files.get(OUT)).toBe(generated);
  });

  it('names generic instantiations and keeps recursive and imported types as $defs', () => {
    expect(Object.keys(result.ir.types)).toEqual([
      'Audit',
      'Category',
      'Circle',
      'Filters',
      'GeoPoint',
      'Item',
      'PageOfItem',
      'Place',
      'Settings',
      'Square',
      'Stamped',
    ]);
    expect(generated).toContain('get children() {\n    return z.array(CategorySchema);\n  },');
  });
});

describe('compiled type check of the generated schemas', () => {
  it(
    'proves every schema equals its source type, in both directions',
    () => {
      const dir = path.join(scratch, 'valid');
      mkdirSync(dir);
      const tsc = runTsc(writeTypeCheckProject(result.ir, PROJECT_DIR, dir, moduleIn(dir)));
      expect(tsc.output).toBe('');
      expect(tsc.exitCode).toBe(0);
    },
    TSC_TIMEOUT_MS,
  );

  it(
    'fails when a union loses a member (negative control)',
    () => {
      const dir = path.join(scratch, 'narrowed');
      mkdirSync(dir);
      const original = moduleIn(dir);
      const tampered = original.replace('key: z.union([\n    z.number(),\n', 'key: z.union([\n');
      expect(tampered).not.toBe(original);
      const tsc = runTsc(writeTypeCheckProject(result.ir, PROJECT_DIR, dir, tampered));
      const failedLines = [...tsc.output.matchAll(/type-check\.ts\((\d+),/g)].map((match) => Number(match[1]));
      const checkLines = readFileSync(path.join(dir, 'type-check.ts'), 'utf8').split('\n');
      expect(failedLines.map((line) => checkLines[line - 1]?.split(':')[0])).toEqual([
        'export const LookupInputMatchesSource',
      ]);
    },
    TSC_TIMEOUT_MS,
  );
});

describe('the generated module at run time', () => {
  let catalog: GeneratedFixture;

  beforeAll(async () => {
    catalog = await loadGeneratedFixture('all-types', result.ir, scratch, {
      classModule: 'src/catalog.ts',
      className: 'Catalog',
    });
  });

  const tool = (name: string) => catalog.tool(name);
  const call = (name: string, args: unknown) => catalog.call(name, args);

  it('accepts and rejects the same arguments in JSON Schema (ajv) as in zod', () => {
    const ajv = strictAjv();
    const item = { sku: 'SKU-12', name: 'Lamp', price: 10, stock: 2, color: 'red', priority: 1, size: 's' };
    const audit = { by: 'u1', at: '2026-01-02T03:04:05Z' };
    const samples: Record<string, unknown[]> = {
      search: [
        {},
        { tag: 'abc', colors: ['red'], bounds: [1, 2], path: ['a', 1, 2], order: 'desc' },
        { tag: 'ABC' },
        { colors: [] },
        { colors: ['red', 'green', 'red', 'green'] },
        { colors: ['blue'] },
        { bounds: [1] },
        { bounds: [1, 2, 3] },
        { path: ['a', 'b'] },
        { counts: { a: 1 } },
        { counts: { a: 'x' } },
        { headers: { 'x-id': 'a' } },
        { headers: { id: 'a' } },
        { labels: { a: 'b' } },
        { level: 2 },
        { level: 4 },
        { exact: true },
        { exact: false },
        { nearest: { name: 'Home', at: { lat: 1, lon: 2 } } },
        { nearest: { name: 'Home', at: { lat: 1 } } },
        { contact: 'a@example.com' },
        { contact: 'not an email' },
        { homepage: 'https://example.com/x' },
        { homepage: 'no url' },
        { requestId: '3f1c6a2e-8b4d-4c1e-9a7f-2b5d8e0c4a19' },
        { requestId: '1234' },
        { day: '2026-02-03' },
        { day: '03.02.2026' },
        { since: '2026-02-03T04:05:06+02:00' },
        { since: '2026-02-03' },
        { order: 'up' },
      ],
      area: [
        { shape: { kind: 'circle', radius: 1 } },
        { shape: { kind: 'square', side: 2 } },
        { shape: { kind: 'square', radius: 2 } },
        { shape: { kind: 'triangle' } },
      ],
      lookup: [{ key: 1 }, { key: 'u1', note: null }, { key: 'u1', note: 'x' }, { key: true }, { note: 'x' }],
      audit: [audit, { by: 'u1', at: 'yesterday' }, { by: 'u1' }],
      stamp: [
        { ...item, audit },
        { ...item, sku: 'SKU-x', audit },
        { ...item, sku: 'SKU--1.5', audit },
        { ...item, name: '', audit },
        { ...item, price: 0, audit },
        { ...item, price: 10001, audit },
        { ...item, stock: 1.5, audit },
        { ...item, stock: -1, audit },
        { ...item, color: 'Red', audit },
        { ...item, priority: 2, audit },
        { ...item, size: 'Small', audit },
        item,
      ],
      tree: [
        { name: 'root', children: [{ name: 'leaf', children: [] }] },
        { name: 'root', children: [{ name: 'leaf' }] },
        { name: 'root', children: [], featured: { ...item, category: { name: 'c', children: [] } } },
        { name: 'root', children: [], featured: { ...item, category: { name: 'c' } } },
      ],
      configure: [
        {
          patch: {},
          required: { currency: 'EUR', locale: 'de', pageSize: 5 },
          picked: { currency: 'EUR' },
          frozen: { currency: 'EUR', locale: 'de' },
          present: { currency: 'EUR', locale: 'de' },
        },
        {
          patch: {},
          required: { currency: 'EUR', locale: 'de' },
          picked: { currency: 'EUR' },
          frozen: { currency: 'EUR', locale: 'de' },
          present: { currency: 'EUR', locale: 'de' },
        },
      ],
      echo: [{ payload: 1 }, { payload: { any: ['thing'] } }, { payload: null }, {}],
    };
    for (const [name, values] of Object.entries(samples)) {
      const definition = tool(name);
      const validate = ajv.compile(definition.inputSchema);
      for (const sample of values) {
        expect({ name, sample, accepted: validate(sample) }).toEqual({
          name,
          sample,
          accepted: definition.input.safeParse(sample).success,
        });
      }
    }
    // The samples must exercise both verdicts, or agreement would prove little.
    const verdicts = Object.entries(samples).flatMap(([name, values]) =>
      values.map((sample) => tool(name).input.safeParse(sample).success),
    );
    expect(verdicts.filter(Boolean).length).toBeGreaterThan(15);
    expect(verdicts.filter((accepted) => !accepted).length).toBeGreaterThan(25);
  });

  it('validates output schemas against what the methods return, also with ajv', async () => {
    const ajv = strictAjv();
    const audited = await call('audit', { by: 'u1', at: '2026-01-02T03:04:05Z' });
    expect(audited.structuredContent).toEqual({ by: 'u1', at: '2026-01-02T03:04:06.000Z' });
    expect(ajv.compile(tool('audit').outputSchema ?? {})(audited.structuredContent)).toBe(true);
    const searched = await call('search', { tag: 'abc' });
    expect(searched.structuredContent).toEqual({ items: [], next: 'abc' });
    expect(ajv.compile(tool('search').outputSchema ?? {})(searched.structuredContent)).toBe(true);
  });

  it('turns ISO strings into Dates for the method and Dates back into ISO strings', async () => {
    const args = tool('audit').input.parse({ by: 'u1', at: '2026-01-02T03:04:05+01:00' }) as { at: unknown };
    expect(args.at).toBeInstanceOf(Date);
    expect((args.at as Date).toISOString()).toBe('2026-01-02T02:04:05.000Z');
    const stamped = await call('stamp', {
      sku: 'SKU-1',
      name: 'Lamp',
      price: 1,
      stock: 0,
      color: 'green',
      priority: 0,
      size: 'l',
      audit: { by: 'u2', at: '2026-05-06T07:08:09.123Z' },
      extra: 'stripped',
    });
    expect(stamped.structuredContent).toEqual({
      sku: 'SKU-1',
      name: 'Lamp',
      price: 1,
      stock: 0,
      color: 'green',
      priority: 0,
      size: 'l',
      audit: { by: 'u2', at: '2026-05-06T07:08:09.123Z' },
    });
  });

  it('renders the other result shapes: text, JSON, content blocks and whole tool results', async () => {
    expect(await call('lookup', { key: 7, note: null })).toEqual({ content: [{ type: 'text', text: '7:-' }] });
    expect(await call('area', { shape: { kind: 'square', side: 3 } })).toEqual({
      content: [{ type: 'text', text: '9' }],
    });
    expect(await call('render', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(await call('verdict', { ok: false })).toEqual({ content: [], isError: true });
    expect(
      await call('configure', {
        patch: {},
        required: { currency: 'EUR', locale: 'de', pageSize: 5 },
        picked: { currency: 'EUR' },
        frozen: { currency: 'EUR', locale: 'de' },
        present: { currency: 'EUR', locale: 'de' },
      }),
    ).toEqual({ content: [] });
  });

  it('reports a return value that breaks the declared type as a tool error naming the path', async () => {
    expect(await call('broken', {})).toEqual({
      content: [
        {
          type: 'text',
          text: 'Tool broken returned a value that does not match its declared type at count: Invalid input: expected number, received string',
        },
      ],
      isError: true,
    });
    const render = tool('render');
    expect(toCallToolResult(render, [{ type: 'text', text: 'ok' }, { type: 'video' }]).content).toEqual([
      {
        type: 'text',
        text: 'Tool render returned a value that does not match its declared type at 1.type: expected one of text, image, audio, resource_link, resource, got "video"',
      },
    ]);
    expect(toCallToolResult(tool('verdict'), { content: 'nope' }).isError).toBe(true);
  });
});
