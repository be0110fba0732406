/**
 * The defects found by trying mcp-taskgen as a new user would, one tool each in the
 * `regressions` fixture: a tool that vanished silently, a refused recursive union, a refused string
 * enum answer, a module that did not compile (a required key holding `undefined`, an enum default),
 * `discriminator` on non-string tags; and the limits lifted with them (enum-member tags, union
 * results, a misplaced JSDoc block). Plus the invariant that no decorated method can vanish.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { emitTaskModule, type GenerateResult, generate } from '../../src/generator/index.js';
import { TypeReader } from '../../src/generator/reader/types.js';
import {
  expectedDiagnostics,
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

const PROJECT_DIR = path.join(FIXTURES, 'regressions');
const OUT = path.join(PROJECT_DIR, 'src/__generated__/tasks.generated.ts');

let result: GenerateResult;
let scratch: string;
let findings: GeneratedFixture;

beforeAll(async () => {
  result = generate({ tsconfig: fixtureTsconfig('regressions'), out: OUT });
  scratch = scratchDir('regressions');
  findings = await loadGeneratedFixture('regressions', result.ir, scratch, {
    classModule: 'src/findings.ts',
    className: 'Findings',
  });
}, TSC_TIMEOUT_MS);

afterAll(() => removeDir(scratch));

const tool = (name: string) => findings.tool(name);

describe('the regressions fixture', () => {
  it('turns every decorated method into a tool, with only the marked warnings', () => {
    expect(result.ir.tools.map((entry) => entry.name)).toEqual([
      'area',
      'cheapest',
      'either',
      'largest',
      'matches',
      'pay',
      'price',
      'quote',
      'stock',
      'toggle',
    ]);
    const located = result.diagnostics.map((diagnostic) => ({
      file: path
        .relative(PROJECT_DIR, diagnostic.location?.file ?? '')
        .split(path.sep)
        .join('/'),
      line: diagnostic.location?.line,
      column: diagnostic.location?.column,
      code: diagnostic.code,
    }));
    expect(located).toEqual(expectedDiagnostics('regressions'));
    expect(result.diagnostics.every((diagnostic) => diagnostic.severity === 'warning')).toBe(true);
  });

  it(
    'emits a module that compiles and whose schemas equal the source types (tsc)',
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

  it('gives ajv (with discriminator: true) schemas it compiles, agreeing with zod on every sample', () => {
    const ajv = strictAjv();
    const money = { amount: 1, currency: 'EUR' };
    const samples: Record<string, unknown[]> = {
      // 1: mapped types with literal keys
      price: [
        { byRegion: { us: money, eu: money }, limits: {}, labels: { fast: 'f', safe: 's' } },
        { byRegion: { us: money, eu: money }, limits: { apac: 3 }, labels: { fast: 'f', safe: 's' } },
        { byRegion: { us: money }, limits: {}, labels: { fast: 'f', safe: 's' } },
        { byRegion: { us: money, eu: money }, limits: { us: 1.5 }, labels: { fast: 'f', safe: 's' } },
        { byRegion: { us: money, eu: money }, limits: {}, labels: { fast: 'f' } },
      ],
      // 2: recursive union through interfaces
      matches: [
        { filter: { field: 'a', equals: 'b' } },
        { filter: { all: [{ field: 'a', equals: 'b' }, { filter: { all: [] } }] } },
        { filter: { all: [{ field: 'a' }] } },
        { filter: { filter: 3 } },
      ],
      // 4: a required key whose type includes undefined
      stock: [{ sku: 'a' }, { sku: 'a', inStock: true }, { sku: 'a', inStock: 'yes' }, { inStock: true }],
      // 5: a string-enum default
      quote: [{ amount: 1 }, { amount: 1, currency: 'USD' }, { amount: 1, currency: 'GBP' }],
      // 6: boolean and number tags
      toggle: [
        { toggle: { enabled: false }, versioned: { version: 1, name: 'n' } },
        { toggle: { enabled: true, level: 2 }, versioned: { version: 2, title: 't' } },
        { toggle: { enabled: true }, versioned: { version: 1, name: 'n' } },
        { toggle: { enabled: false }, versioned: { version: 3, name: 'n' } },
      ],
      // 7: enum members as tags
      area: [
        { shape: { kind: 'circle', radius: 1 }, leveled: { level: 1, note: 'n' } },
        { shape: { kind: 'square', side: 1 }, leveled: { level: 3, alarm: true } },
        { shape: { kind: 'square', radius: 1 }, leveled: { level: 1, note: 'n' } },
        { shape: { kind: 'circle', radius: 1 }, leveled: { level: 2, note: 'n' } },
        { shape: { kind: 'Circle', radius: 1 }, leveled: { level: 1, note: 'n' } },
      ],
    };
    let accepted = 0;
    let rejected = 0;
    for (const [name, values] of Object.entries(samples)) {
      const definition = tool(name);
      const validate = ajv.compile(definition.inputSchema);
      for (const sample of values) {
        const verdict = definition.input.safeParse(sample).success;
        expect({ name, sample, accepted: validate(sample) }).toEqual({ name, sample, accepted: verdict });
        if (verdict) accepted++;
        else rejected++;
      }
    }
    expect(accepted).toBeGreaterThan(8);
    expect(rejected).toBeGreaterThan(8);
    for (const definition of findings.manifest.tools) if (definition.outputSchema) ajv.compile(definition.outputSchema);
  });

  it('uses discriminator only for string tags, enum members included', () => {
    const properties = (name: string) => tool(name).inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties('toggle').toggle).not.toHaveProperty('discriminator');
    expect(properties('toggle').versioned).not.toHaveProperty('discriminator');
    expect(properties('area').shape).toMatchObject({ discriminator: { propertyName: 'kind' } });
    expect(properties('area').leveled).not.toHaveProperty('discriminator');
  });
});

describe('the generated module at run time', () => {
  const call = (name: string, args: unknown) => findings.call(name, args);

  it('asks a string-enum question with an enum schema and validates the answer', () => {
    const [question] = tool('pay').questions ?? [];
    expect(question?.schema).toEqual({
      type: 'object',
      properties: { currency: { type: 'string', enum: ['EUR', 'USD'] } },
      required: ['currency'],
    });
    expect(question?.answer.safeParse({ currency: 'USD' }).success).toBe(true);
    expect(question?.answer.safeParse({ currency: 'GBP' }).success).toBe(false);
  });

  it('fills a string-enum default with the enum member', async () => {
    expect(tool('quote').input.parse({ amount: 2 })).toEqual({ amount: 2, currency: 'EUR' });
    expect(await call('quote', { amount: 2 })).toEqual({ content: [{ type: 'text', text: '2 EUR' }] });
  });

  it('lets a required key that may be undefined be absent on the wire', async () => {
    expect(await call('stock', { sku: 'a' })).toEqual({ content: [{ type: 'text', text: 'a:undefined' }] });
    expect(await call('stock', { sku: 'a', inStock: false })).toEqual({ content: [{ type: 'text', text: 'a:false' }] });
  });

  it('returns a union of objects as structuredContent under an object outputSchema', async () => {
    expect(tool('largest').outputSchema).toMatchObject({
      type: 'object',
      oneOf: [{ $ref: '#/$defs/Circle' }, { $ref: '#/$defs/Square' }],
      discriminator: { propertyName: 'kind' },
    });
    const called = await call('largest', { min: 1, max: 4 });
    expect(called.structuredContent).toEqual({ kind: 'circle', radius: 4 });
    expect(strictAjv().compile(tool('largest').outputSchema ?? {})(called.structuredContent)).toBe(true);
  });

  it('sends a union with null or non-objects as JSON text, without an outputSchema', async () => {
    expect(tool('cheapest').outputSchema).toBeUndefined();
    expect(await call('cheapest', { currency: 'USD' })).toEqual({ content: [{ type: 'text', text: 'null' }] });
    expect(tool('either').outputSchema).toBeUndefined();
    expect(await call('either', { text: '12' })).toEqual({ content: [{ type: 'text', text: '12' }] });
  });
});

describe('no decorated method vanishes', () => {
  it('reports MTG2009 for a method a reader gave up on without saying why', () => {
    // Simulates a type shape the readers do not know yet: they return nothing and report nothing.
    const original = TypeReader.prototype.readOptionalAware;
    const spy = vi.spyOn(TypeReader.prototype, 'readOptionalAware').mockImplementation(function (
      this: TypeReader,
      type,
      site,
    ) {
      if (site.subject === "parameter 'text' of Findings.either") return { type: undefined, includesUndefined: false };
      return original.call(this, type, site);
    });
    try {
      const silent = generate({ tsconfig: fixtureTsconfig('regressions'), out: OUT });
      const errors = silent.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
      expect(errors.map((diagnostic) => [diagnostic.code, diagnostic.message, diagnostic.location?.line])).toEqual([
        [
          'MTG2009',
          'Findings.either: mcp-taskgen could not turn this method into a tool and found no specific reason',
          expect.any(Number),
        ],
      ]);
      expect(silent.files.size).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });
});
