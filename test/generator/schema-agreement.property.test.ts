/**
 * Property-style: random nested type declarations within the supported grammar (primitives,
 * bounds, literal unions, enums and enum members, templates, dates, arrays, tuples, objects with
 * optional and `| undefined` keys, named and recursive interfaces, records, literal-keyed and
 * partial records, tagged and plain unions, nullables, intersections) become one generated
 * project; for each type, random values of it must pass both the JSON Schema (ajv) and zod, and
 * random mutations of them must get the same verdict from both. The generated module must compile.
 *
 * Seeded and deterministic (`PROPERTY_SEED` explores another seed, `PROPERTY_KEEP=1` keeps the
 * project); one project, one generator run and one `tsc` keep it to seconds.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitTaskModule, type GenerateResult, generate } from '../../src/generator/index.js';
import type { TaskManifest } from '../../src/index.js';
import { FIXTURES, removeDir, runTsc, scratchDir, TSC_TIMEOUT_MS, writeTypeCheckProject } from './helpers.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const SEED = Number(process.env.PROPERTY_SEED ?? 20261130);
const TYPE_COUNT = 30;
const INTERFACE_COUNT = 4;
const VALUES_PER_TYPE = 12;
const MUTATIONS_PER_VALUE = 3;
const MAX_DEPTH = 3;

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** mulberry32: small, fast and the same on every machine. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Presence = 'required' | 'optional' | 'undefined';

interface Prop {
  readonly name: string;
  readonly type: Shape;
  readonly presence: Presence;
}

type Shape =
  | { readonly k: 'string' | 'boolean' | 'integer' | 'template' | 'date' }
  | { readonly k: 'number'; readonly min?: number; readonly max?: number }
  | { readonly k: 'strings'; readonly values: readonly string[] }
  | { readonly k: 'numbers'; readonly values: readonly number[] }
  | { readonly k: 'enum' }
  | { readonly k: 'enum-member'; readonly member: 'Red' | 'Green' | 'Blue' }
  | { readonly k: 'nullable'; readonly of: Shape }
  | { readonly k: 'array'; readonly of: Shape; readonly readonly: boolean }
  | { readonly k: 'tuple'; readonly items: readonly Shape[]; readonly rest?: Shape }
  | { readonly k: 'object'; readonly props: readonly Prop[] }
  | { readonly k: 'ref'; readonly index: number }
  | { readonly k: 'record'; readonly of: Shape }
  | { readonly k: 'keyed'; readonly keys: readonly string[]; readonly of: Shape; readonly partial: boolean }
  | { readonly k: 'tagged'; readonly branches: readonly (readonly Prop[])[] }
  | { readonly k: 'union'; readonly members: readonly Shape[] }
  | { readonly k: 'intersection'; readonly left: readonly Prop[]; readonly right: readonly Prop[] };

const ENUM_VALUES = { Red: 'red', Green: 'green', Blue: 'blue' } as const;

class Grammar {
  readonly interfaces: Prop[][] = [];

  constructor(private readonly next: () => number) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A type whose values are never `null` or a union, so it can sit in a union or be nullable. */
  leaf(): Shape {
    const kind = this.pick([
      'string',
      'boolean',
      'integer',
      'number',
      'template',
      'date',
      'strings',
      'numbers',
      'enum',
    ]);
    switch (kind) {
      case 'number':
        return this.next() < 0.5 ? { k: 'number' } : { k: 'number', min: -5, max: 100 };
      case 'strings':
        return { k: 'strings', values: this.pick([['low', 'high'], ['a', 'b', 'c'], ['only']]) };
      case 'numbers':
        return {
          k: 'numbers',
          values: this.pick([
            [1, 2],
            [0, 10, 20],
          ]),
        };
      default:
        return { k: kind as 'string' | 'boolean' | 'integer' | 'template' | 'date' | 'enum' };
    }
  }

  shape(depth: number, selfIndex?: number): Shape {
    if (depth >= MAX_DEPTH) return this.leaf();
    const kind = this.pick([
      'leaf',
      'leaf',
      'enum-member',
      'nullable',
      'array',
      'tuple',
      'object',
      'ref',
      'record',
      'keyed',
      'tagged',
      'union',
      'intersection',
    ]);
    const inner = () => this.shape(depth + 1, selfIndex);
    switch (kind) {
      case 'enum-member':
        return { k: 'enum-member', member: this.pick(['Red', 'Green', 'Blue'] as const) };
      case 'nullable':
        return { k: 'nullable', of: this.pick([this.leaf(), { k: 'array', of: this.leaf(), readonly: false }]) };
      case 'array':
        return { k: 'array', of: inner(), readonly: this.next() < 0.3 };
      case 'tuple':
        return this.next() < 0.5
          ? { k: 'tuple', items: [inner(), inner()] }
          : { k: 'tuple', items: [inner()], rest: this.leaf() };
      case 'object':
        return { k: 'object', props: this.props(depth + 1, selfIndex) };
      case 'ref':
        return this.interfaces.length > 0
          ? { k: 'ref', index: Math.floor(this.next() * this.interfaces.length) }
          : this.leaf();
      case 'record':
        return { k: 'record', of: inner() };
      case 'keyed':
        return {
          k: 'keyed',
          keys: this.pick([
            ['us', 'eu'],
            ['x', 'y', 'z'],
          ]),
          of: inner(),
          partial: this.next() < 0.5,
        };
      case 'tagged':
        return {
          k: 'tagged',
          branches: [
            this.props(depth + 1, selfIndex),
            this.props(depth + 1, selfIndex),
            this.props(depth + 1, selfIndex),
          ].slice(0, 2 + Math.floor(this.next() * 2)),
        };
      case 'union': {
        // Members of different JSON types, as users write them (string | number[] | { ... }).
        const members: Shape[] = [{ k: 'string' }, { k: 'array', of: this.leaf(), readonly: false }];
        if (this.next() < 0.5) members.push({ k: 'object', props: this.props(depth + 1, selfIndex) });
        if (this.next() < 0.5) members.push({ k: 'boolean' });
        return { k: 'union', members };
      }
      case 'intersection':
        return {
          k: 'intersection',
          left: this.props(depth + 1, selfIndex, 'l'),
          right: this.props(depth + 1, selfIndex, 'r'),
        };
      default:
        return this.leaf();
    }
  }

  props(depth: number, selfIndex?: number, prefix = 'p'): Prop[] {
    const count = 1 + Math.floor(this.next() * 3);
    const props: Prop[] = [];
    for (let index = 0; index < count; index++) {
      const presence = this.pick<Presence>(['required', 'required', 'optional', 'undefined']);
      props.push({ name: `${prefix}${index}`, type: this.shape(depth, selfIndex), presence });
    }
    // Recursion through the interface being declared: optional, so values can end.
    if (selfIndex !== undefined && this.next() < 0.3)
      props.push({
        name: 'children',
        type: { k: 'array', of: { k: 'ref', index: selfIndex }, readonly: false },
        presence: 'optional',
      });
    return props;
  }
}

function tsType(shape: Shape): string {
  switch (shape.k) {
    case 'string':
    case 'boolean':
      return shape.k;
    case 'integer':
      return 'Integer';
    case 'template':
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source text, not a template
      return '`id-${number}`';
    case 'date':
      return 'Date';
    case 'number':
      return 'number';
    case 'strings':
      return shape.values.map((value) => `'${value}'`).join(' | ');
    case 'numbers':
      return shape.values.join(' | ');
    case 'enum':
      return 'Color';
    case 'enum-member':
      return `Color.${shape.member}`;
    case 'nullable':
      return `${operand(shape.of)} | null`;
    case 'array':
      return `${shape.readonly ? 'readonly ' : ''}${operand(shape.of)}[]`;
    case 'tuple':
      return `[${[...shape.items.map(tsType), ...(shape.rest ? [`...${operand(shape.rest)}[]`] : [])].join(', ')}]`;
    case 'object':
      return objectLiteral(shape.props);
    case 'ref':
      return `Node${shape.index}`;
    case 'record':
      return `Record<string, ${tsType(shape.of)}>`;
    case 'keyed': {
      const record = `Record<${shape.keys.map((key) => `'${key}'`).join(' | ')}, ${tsType(shape.of)}>`;
      return shape.partial ? `Partial<${record}>` : record;
    }
    case 'tagged':
      return shape.branches.map((props, index) => objectLiteral([...props], `kind: 'b${index}';`)).join(' | ');
    case 'union':
      return shape.members.map(operand).join(' | ');
    case 'intersection':
      return `${objectLiteral(shape.left)} & ${objectLiteral(shape.right)}`;
  }
}

/** The type as an operand of `[]`, `|` or `&`: unions and intersections in parentheses. */
function operand(shape: Shape): string {
  const compound = ['nullable', 'tagged', 'union', 'intersection', 'strings', 'numbers'].includes(shape.k);
  return compound ? `(${tsType(shape)})` : tsType(shape);
}

/** One member per line, so that each JSDoc block starts a line of its own, as TypeScript needs. */
function objectLiteral(props: readonly Prop[], head?: string): string {
  return `{\n${[...(head ? [head] : []), ...props.map(propertyLine)].join('\n')}\n}`;
}

function propertyLine(prop: Prop): string {
  const bounds =
    prop.type.k === 'number' && prop.type.min !== undefined
      ? `/**\n * @minimum ${prop.type.min}\n * @maximum ${prop.type.max}\n */\n`
      : '';
  const type = tsType(prop.type);
  if (prop.presence === 'optional') return `${bounds}${prop.name}?: ${type};`;
  if (prop.presence === 'undefined') return `${bounds}${prop.name}: ${operand(prop.type)} | undefined;`;
  return `${bounds}${prop.name}: ${type};`;
}

/** A random valid wire value of `shape`. */
function validValue(shape: Shape, grammar: Grammar, depth: number): Json {
  const { next } = { next: () => grammar.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) / 10 };
  switch (shape.k) {
    case 'string':
      return grammar.pick(['', 'a', 'hello world', 'ünïcode']);
    case 'boolean':
      return next() < 0.5;
    case 'integer':
      return grammar.pick([0, 1, -7, 42]);
    case 'number':
      return shape.min !== undefined ? grammar.pick([-5, 0, 3.5, 100]) : grammar.pick([0, -1.5, 1e6, 7]);
    case 'template':
      return grammar.pick(['id-1', 'id-0.5', 'id--3']);
    case 'date':
      return grammar.pick(['2026-01-02T03:04:05Z', '2026-11-30T23:59:59.123+02:00']);
    case 'strings':
    case 'numbers':
      return grammar.pick<string | number>(shape.values);
    case 'enum':
      return grammar.pick(Object.values(ENUM_VALUES));
    case 'enum-member':
      return ENUM_VALUES[shape.member];
    case 'nullable':
      return next() < 0.3 ? null : validValue(shape.of, grammar, depth + 1);
    case 'array': {
      const length = depth > 4 ? 0 : grammar.pick([0, 1, 2]);
      return Array.from({ length }, () => validValue(shape.of, grammar, depth + 1));
    }
    case 'tuple': {
      const rest = shape.rest && depth <= 4 ? grammar.pick([0, 1, 2]) : 0;
      return [
        ...shape.items.map((item) => validValue(item, grammar, depth + 1)),
        ...Array.from({ length: rest }, () => validValue(shape.rest as Shape, grammar, depth + 1)),
      ];
    }
    case 'object':
      return objectValue(shape.props, grammar, depth);
    case 'ref':
      return objectValue(grammar.interfaces[shape.index] ?? [], grammar, depth);
    case 'record': {
      const keys = grammar.pick([[], ['a'], ['a', 'b-c']]);
      return Object.fromEntries(keys.map((key) => [key, validValue(shape.of, grammar, depth + 1)]));
    }
    case 'keyed':
      return Object.fromEntries(
        shape.keys
          .filter(() => !shape.partial || next() < 0.6)
          .map((key) => [key, validValue(shape.of, grammar, depth + 1)]),
      );
    case 'tagged': {
      const index = Math.floor(next() * shape.branches.length);
      return { kind: `b${index}`, ...(objectValue(shape.branches[index] ?? [], grammar, depth) as object) };
    }
    case 'union':
      return validValue(grammar.pick(shape.members), grammar, depth + 1);
    case 'intersection':
      return {
        ...(objectValue(shape.left, grammar, depth) as object),
        ...(objectValue(shape.right, grammar, depth) as object),
      };
  }
}

function objectValue(props: readonly Prop[], grammar: Grammar, depth: number): Json {
  const value: { [key: string]: Json } = {};
  for (const prop of props) {
    const optional = prop.presence !== 'required';
    // Deep values drop their optional keys, so recursive interfaces end.
    if (optional && (depth > 4 || grammar.pick([true, false]))) continue;
    value[prop.name] = validValue(prop.type, grammar, depth + 1);
  }
  return value;
}

const REPLACEMENTS: readonly Json[] = [42, 1.5, -1000, 'x', 'id-x', true, null, [], {}, ['x'], 'green', 'b9'];

/** `value` with one node replaced by something else, or one key removed. */
function mutate(value: Json, grammar: Grammar): Json {
  const paths: (string | number)[][] = [];
  const visit = (node: Json, at: (string | number)[]): void => {
    paths.push(at);
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, [...at, index]);
    } else if (node !== null && typeof node === 'object')
      for (const [key, item] of Object.entries(node)) visit(item, [...at, key]);
  };
  visit(value, []);
  const target = grammar.pick(paths.filter((at) => at.length > 0));
  if (!target) return value;
  const copy = structuredClone(value);
  let parent: Json = copy;
  for (const step of target.slice(0, -1)) parent = (parent as { [key: string]: Json })[step] as Json;
  const last = target[target.length - 1] as string | number;
  if (!Array.isArray(parent) && grammar.pick([true, false, false])) delete (parent as { [key: string]: Json })[last];
  else (parent as { [key: string]: Json })[last] = grammar.pick(REPLACEMENTS);
  return copy;
}

let scratch: string;
let result: GenerateResult;
let manifest: TaskManifest;
let grammar: Grammar;
let shapes: Shape[];
let projectDir: string;

beforeAll(async () => {
  grammar = new Grammar(random(SEED));
  for (let index = 0; index < INTERFACE_COUNT; index++) grammar.interfaces.push(grammar.props(1, index));
  shapes = Array.from({ length: TYPE_COUNT }, () => grammar.shape(0));
  scratch = scratchDir('property');
  // At the depth of a fixture, so that the framework's relative path is the fixtures' one.
  projectDir = path.join(scratch, 'project');
  mkdirSync(path.join(projectDir, 'src'), { recursive: true });
  writeFileSync(
    path.join(projectDir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.relative(projectDir, path.join(FIXTURES, 'all-types/tsconfig.json')),
      include: ['src'],
    }),
  );
  const source = [
    "import { Tool } from '../../../../../../src/decorators/index.js';",
    "import type { Integer } from '../../../../../../src/index.js';",
    '',
    "export enum Color { Red = 'red', Green = 'green', Blue = 'blue' }",
    ...grammar.interfaces.map((props, index) => `export interface Node${index} ${objectLiteral(props)}`),
    ...shapes.map((shape, index) => `export type T${index} = ${tsType(shape)};`),
    '',
    'export class Random {',
    ...shapes.map(
      (_shape, index) => `  @Tool()\n  t${index}(input: { value: T${index} }): void {\n    void input;\n  }`,
    ),
    '}',
    '',
  ].join('\n');
  writeFileSync(path.join(projectDir, 'src/random.ts'), source);
  result = generate({ tsconfig: path.join(projectDir, 'tsconfig.json'), out: path.join(projectDir, 'src/gen.ts') });
  const out = path.join(projectDir, 'generated/tasks.generated.ts');
  mkdirSync(path.dirname(out));
  writeFileSync(out, emitTaskModule(result.ir, { projectDir, outFile: out }));
  ({ taskManifest: manifest } = (await import(out)) as { taskManifest: TaskManifest });
}, TSC_TIMEOUT_MS);

// `PROPERTY_KEEP=1` keeps the generated project for a look at a failing seed.
afterAll(() => {
  if (!process.env.PROPERTY_KEEP) removeDir(scratch);
});

describe(`random types (seed ${SEED})`, () => {
  it('all become tools, without errors', () => {
    expect(result.diagnostics.filter((diagnostic) => diagnostic.code !== 'MTG1012')).toEqual([]);
    expect(manifest.tools).toHaveLength(TYPE_COUNT);
  });

  it(
    'compile, with schemas equal to the declared types (tsc)',
    () => {
      const dir = path.join(projectDir, 'typecheck');
      mkdirSync(dir);
      const moduleText = emitTaskModule(result.ir, { projectDir, outFile: path.join(dir, 'tasks.generated.ts') });
      const tsc = runTsc(writeTypeCheckProject(result.ir, projectDir, dir, moduleText));
      expect(tsc.output).toBe('');
      expect(tsc.exitCode).toBe(0);
    },
    TSC_TIMEOUT_MS,
  );

  it('accept their values in ajv and zod, and give mutated values the same verdict in both', () => {
    const ajv = addFormats(new Ajv2020({ strict: true, strictTuples: false, discriminator: true }));
    let rejected = 0;
    for (const [index, shape] of shapes.entries()) {
      const tool = manifest.tools.find((candidate) => candidate.name === `t${index}`);
      if (!tool) throw new Error(`no tool t${index}`);
      const validate = ajv.compile(tool.inputSchema);
      const type = tsType(shape).replace(/\s+/g, ' ');
      for (let round = 0; round < VALUES_PER_TYPE; round++) {
        const sample = { value: validValue(shape, grammar, 0) };
        expect({ type, sample, ajv: validate(sample), zod: tool.input.safeParse(sample).success }).toEqual({
          type,
          sample,
          ajv: true,
          zod: true,
        });
        for (let mutation = 0; mutation < MUTATIONS_PER_VALUE; mutation++) {
          const mutated = mutate(sample, grammar);
          const zod = tool.input.safeParse(mutated).success;
          expect({ type, mutated, ajv: validate(mutated), zod }).toEqual({ type, mutated, ajv: zod, zod });
          if (!zod) rejected++;
        }
      }
    }
    // Mutations must mostly break the value, or agreement would prove little.
    expect(rejected).toBeGreaterThan(TYPE_COUNT * VALUES_PER_TYPE);
  });
});
