/**
 * `--watch` reuses what earlier runs built (the reader per file, `finalizeTypes` per tool, the
 * emitter per tool and named schema). A stale schema is far worse than a slow one, so these tests
 * hold the cached output to the bytes a cold run produces, after edits that reach a tool only
 * indirectly: a type two imports away, a `Date` that splits schemas by side, a renamed identifier.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmitCache } from '../../src/generator/emit/emit-cache.js';
import { emitTaskModule } from '../../src/generator/emit/module.js';
import { generate, type WatchCycle, watchProject } from '../../src/generator/index.js';
import type { ManifestIR, NamedTypeIR, ObjectTypeIR, PropertyIR, ToolIR } from '../../src/generator/ir.js';
import { copyFixture, nextCycle, removeDir, TSC_TIMEOUT_MS } from './helpers.js';

const PROJECT = path.resolve('/project');
const OUT = path.join(PROJECT, 'src/__generated__/tasks.generated.ts');

const property = (name: string, type: PropertyIR['type']): PropertyIR => ({ name, type, optional: false });
const named = (name: string, ...properties: PropertyIR[]): NamedTypeIR => ({
  name,
  source: `src/model.ts:1:1`,
  type: { kind: 'object', properties },
});

function tool(name: string, exportName: string, output: ToolIR['output']): ToolIR {
  return {
    name,
    decorator: 'task',
    taskSupport: 'optional',
    target: { exportName, module: `src/${name}.ts`, method: name },
    source: `src/${name}.ts:1:1`,
    input: { kind: 'object', properties: [property('path', { kind: 'string' })] },
    call: [{ kind: 'property', name: 'path' }],
    output,
    questions: [],
  };
}

/** `build_report` reaches `Tag` only through `Report` and `Entry`; `list_tags` directly; `greet` not at all. */
function baseManifest(): ManifestIR {
  return {
    sourceFiles: ['src/build_report.ts', 'src/greet.ts', 'src/list_tags.ts'],
    types: {
      Entry: named('Entry', property('name', { kind: 'string' }), property('tag', { kind: 'ref', name: 'Tag' })),
      Report: named(
        'Report',
        property('entries', { kind: 'array', items: { kind: 'ref', name: 'Entry' }, readonly: false }),
      ),
      Tag: named('Tag', property('label', { kind: 'string' })),
    },
    tools: [
      tool('build_report', 'Reports', { result: 'structured', type: { kind: 'ref', name: 'Report' } }),
      tool('greet', 'Greeter', { result: 'text', type: { kind: 'string' } }),
      tool('list_tags', 'Tags', {
        result: 'structured',
        type: {
          kind: 'object',
          properties: [property('tags', { kind: 'array', items: { kind: 'ref', name: 'Tag' }, readonly: false })],
        },
      }),
    ],
  };
}

/** A copy with `Tag` given one more property. */
function withTagProperty(ir: ManifestIR, added: PropertyIR): ManifestIR {
  const tag = ir.types.Tag as NamedTypeIR;
  const type: ObjectTypeIR = { ...tag.type, properties: [...tag.type.properties, added] };
  return { ...ir, types: { ...ir.types, Tag: { ...tag, type } } };
}

describe('the emitter cache', () => {
  it('gives the bytes of a cold emit after every kind of edit, and reuses what an edit did not reach', () => {
    const cache = new EmitCache();
    const options = { projectDir: PROJECT, outFile: OUT };
    const base = baseManifest();
    const steps: [label: string, ir: ManifestIR][] = [
      ['base', base],
      // Reaches build_report two references away, list_tags directly, greet not at all.
      ['Tag gains a property', withTagProperty(base, property('color', { kind: 'enum', values: ['red', 'blue'] }))],
      // A Date splits Tag, Entry and Report into input and output schemas: new names everywhere.
      ['Tag gains a Date', withTagProperty(base, property('createdAt', { kind: 'date-time' }))],
      // A class exported as `TagSchema` takes that identifier: Tag's schema becomes TagSchema2.
      [
        'an identifier is taken',
        {
          ...base,
          sourceFiles: [...base.sourceFiles, 'src/tag_schema.ts'],
          tools: [...base.tools, tool('tag_schema', 'TagSchema', { result: 'none' })],
        },
      ],
      ['a tool is removed', { ...base, tools: base.tools.filter((entry) => entry.name !== 'list_tags') }],
      // Fresh objects with the same content, as a re-read file gives: reused, not rebuilt.
      ['base, read again', structuredClone(base)],
    ];
    let previous = '';
    const builtPerStep: number[] = [];
    for (const [label, ir] of steps) {
      const builtBefore = cache.stats().built;
      const cached = emitTaskModule(ir, { ...options, cache });
      builtPerStep.push(cache.stats().built - builtBefore);
      expect(cached, label).toBe(emitTaskModule(ir, options));
      if (label !== 'base, read again') expect(cached, label).not.toBe(previous);
      previous = cached;
    }
    expect(previous).toBe(emitTaskModule(base, options));
    // base: 3 named schemas + 3 tools. A new Tag property rebuilds Tag's schema and the two tools
    // that reach it (their manifest entries copy Tag into `$defs`); Entry's and Report's zod
    // constants only name TagSchema, so they stay; greet stays.
    expect(builtPerStep[0]).toBe(6);
    expect(builtPerStep[1]).toBe(3);
    // Only list_tags, forgotten when the step before removed it.
    expect(builtPerStep.at(-1)).toBe(1);
  });
});

describe('--watch', () => {
  const copies: string[] = [];
  afterAll(() => {
    for (const copy of copies) removeDir(copy);
  });

  /** Watches a copy of `ts7-project` with `files` added; `edit` writes a file and waits for the run. */
  async function watchCopy(files: Record<string, string>) {
    const project = copyFixture('ts7-project');
    copies.push(project);
    const write = (file: string, text: string) => writeFileSync(path.join(project, file), text);
    for (const [file, text] of Object.entries(files)) write(file, text);
    const tsconfig = path.join(project, 'tsconfig.json');
    const out = path.join(project, 'src/__generated__/tasks.generated.ts');
    const cycles: WatchCycle[] = [];
    const handle = watchProject({ tsconfig, out, cwd: project, log: () => {}, onCycle: (cycle) => cycles.push(cycle) });
    expect((await nextCycle(cycles, 0)).outcome).toBe('written');
    return {
      project,
      /** The generated module as the watcher left it. */
      generated: () => readFileSync(out, 'utf8'),
      /** What a cold run writes for the project as it is on disk now. */
      cold: () => generate({ tsconfig, out, cwd: project }).files.get(out),
      edit: (file: string, text: string) => {
        write(file, text);
        return nextCycle(cycles, cycles.length);
      },
      stop: () => handle.stop(),
    };
  }

  const decorated = (...lines: string[]) =>
    ["import { Task } from '../../../../../src/decorators/index.js';", ...lines, ''].join('\n');

  it(
    'picks up an edit to a global type, which the tool that uses it does not import',
    async () => {
      // A script (no import or export): its interface is global. The '@' makes it a scanned file.
      const globals = '/** Run options. @see Runner */\ninterface RunOptions {\n  verbose: boolean;\n}\n';
      const watched = await watchCopy({
        'src/globals.ts': globals,
        'src/runner.ts': decorated(
          '',
          'export class Runner {',
          '  /** Runs. */',
          '  @Task()',
          '  async run(options: RunOptions): Promise<string> {',
          '    return String(options.verbose);',
          '  }',
          '}',
        ),
      });
      try {
        expect(watched.generated()).not.toContain('level');
        const cycle = await watched.edit('src/globals.ts', globals.replace('}', '  level: number;\n}'));
        expect(cycle).toMatchObject({ outcome: 'written' });
        expect(watched.generated()).toContain('level: z.number()');
        expect(watched.generated()).toBe(watched.cold());
      } finally {
        await watched.stop();
      }
    },
    // Each comparison is a cold run, reading the project anew.
    TSC_TIMEOUT_MS,
  );

  it(
    'picks up an edit to a type in another file that a tool uses, two imports away',
    async () => {
      const watched = await watchCopy({
        'src/tag.ts': 'export interface Tag {\n  label: string;\n}\n',
        'src/entry.ts':
          "import type { Tag } from './tag.js';\n\nexport interface Entry {\n  name: string;\n  tag: Tag;\n}\n",
        'src/reports.ts': decorated(
          "import type { Entry } from './entry.js';",
          '',
          'export interface Report {',
          '  entries: Entry[];',
          '}',
          '',
          'export class Reports {',
          '  /** Builds a report. */',
          '  @Task()',
          '  async buildReport(path: string): Promise<Report> {',
          '    return { entries: [{ name: path, tag: { label: "x" } as never }] };',
          '  }',
          '}',
        ),
      });
      try {
        expect(watched.generated()).toBe(watched.cold());
        const greeter = readFileSync(path.join(watched.project, 'src/greeter.ts'), 'utf8');
        const edits: [file: string, text: string, visible: string][] = [
          ['src/tag.ts', "export interface Tag {\n  label: string;\n  color: 'red' | 'blue';\n}\n", "'red', 'blue'"],
          ['src/tag.ts', 'export interface Tag {\n  label: string;\n  createdAt: Date;\n}\n', 'TagOutputSchema'],
          [
            'src/entry.ts',
            "import type { Tag } from './tag.js';\n\nexport interface Entry {\n  tag: Tag;\n  size: number;\n}\n",
            'size: z.number()',
          ],
          // Another Tag in a file that reports.ts does not import: reports.ts is not read again, yet
          // its Tag is now displayed as Tag2.
          [
            'src/greeter.ts',
            greeter.replace(
              '  text: string;\n}',
              '  text: string;\n  tag?: Tag;\n}\n\nexport interface Tag {\n  id: number;\n}',
            ),
            'Tag2OutputSchema',
          ],
        ];
        for (const [file, text, visible] of edits) {
          const cycle = await watched.edit(file, text);
          expect(cycle, file).toMatchObject({ outcome: 'written', changed: [path.join(watched.project, file)] });
          expect(watched.generated(), file).toContain(visible);
          expect(watched.generated(), file).toBe(watched.cold());
        }
      } finally {
        await watched.stop();
      }
    },
    TSC_TIMEOUT_MS,
  );
});
