/**
 * A module that proves, at compile time, that the generated zod schemas describe exactly the
 * source types: for every tool, `z.input` of its input schema equals the method's parameters (in
 * their wire form: `Date` as string) and `z.input` of its output schema equals the awaited return
 * type, in both directions.
 *
 * `z.input` rather than `z.output` because a `@default` makes a property optional on the wire
 * and present after parsing; what the method receives (`z.output`) is checked one way, which is
 * what the generated `invoke` arrows already prove when the generated module compiles.
 * Compile it with `tsc --noEmit`; a failing line names the tool and its source location.
 */
import path from 'node:path';
import { generatedHeader } from '../header.js';
import type { ManifestIR, ToolIR } from '../ir.js';
import { someType } from '../ir-walk.js';
import { compareStrings, toPascalCase } from '../naming.js';
import { relativeImport } from './module.js';
import { allocateNames, hasOutputSchema, type ModuleNames } from './names.js';
import { propertyKey, stringLiteral } from './printer.js';

export interface TypeCheckOptions {
  /** The tsconfig directory, which module paths in the IR are relative to (absolute). */
  readonly projectDir: string;
  /** Where the check module will be written (absolute). */
  readonly checkFile: string;
  /** Where the generated module is (absolute). */
  readonly generatedFile: string;
}

const HELPERS = [
  '/** `true` only when A and B are assignable to each other. */',
  '/** The wire form of a source type: a `Date` travels as its ISO string. Brands and other primitives stay. */',
  'type Wire<T> = T extends Date ? string : T extends string | number | boolean | null | undefined ? T : { [K in keyof T]: Wire<T[K]> };',
  'type Equals<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;',
  'type Assignable<A, B> = [A] extends [B] ? true : false;',
  'type Params<T, M extends keyof T> = T[M] extends (...args: infer P) => unknown ? P : never;',
  'type Returns<T, M extends keyof T> = T[M] extends (...args: never[]) => infer R ? Awaited<R> : never;',
];

export function emitTypeCheckModule(ir: ManifestIR, options: TypeCheckOptions): string {
  const names = allocateNames(ir);
  const schemaImports = new Set<string>();
  const classImports = new Map<string, Set<string>>();
  const blocks: string[] = [];
  for (const tool of ir.tools) {
    const binding = names.classBinding(tool.target);
    const specifier = relativeImport(options.projectDir, options.checkFile, tool.target.module);
    const clause = binding === tool.target.exportName ? binding : `${tool.target.exportName} as ${binding}`;
    classImports.set(specifier, (classImports.get(specifier) ?? new Set()).add(clause));
    schemaImports.add(names.toolInput(tool.name));
    if (hasOutputSchema(tool)) schemaImports.add(names.toolOutput(tool.name));
    blocks.push(toolChecks(tool, ir, names, binding).join('\n'));
  }
  const imports = ["import type { z } from 'zod';"];
  for (const specifier of [...classImports.keys()].sort(compareStrings)) {
    imports.push(
      `import type { ${[...(classImports.get(specifier) ?? [])].sort(compareStrings).join(', ')} } from ${stringLiteral(specifier)};`,
    );
  }
  if (schemaImports.size > 0) {
    const generated = relativeImport(
      path.dirname(options.generatedFile),
      options.checkFile,
      path.basename(options.generatedFile),
    );
    imports.push(
      `import type { ${[...schemaImports].sort(compareStrings).join(', ')} } from ${stringLiteral(generated)};`,
    );
  }
  return `${[generatedHeader(ir.sourceFiles).join('\n'), imports.join('\n'), HELPERS.join('\n'), ...blocks].join('\n\n')}\n`;
}

function toolChecks(tool: ToolIR, ir: ManifestIR, names: ModuleNames, binding: string): string[] {
  const method = stringLiteral(tool.target.method);
  const params = `Params<${binding}, ${method}>`;
  const constBase = toPascalCase(tool.name);
  const input = `z.input<typeof ${names.toolInput(tool.name)}>`;
  const parsed = `z.output<typeof ${names.toolInput(tool.name)}>`;
  const sourceInput = expectedInput(tool, params);
  // Only where a Date is involved: `Wire` maps over object types, which would flatten brands elsewhere.
  const hasDate = someType(
    tool.input,
    (type) => type.kind === 'date-time',
    (name) => ir.types[name]?.type,
  );
  const wireInput = hasDate ? `Wire<${sourceInput}>` : sourceInput;
  const lines = [
    `// ${tool.name}: ${binding}.${tool.target.method} (${tool.source})`,
    `export const ${constBase}InputMatchesSource: Equals<${input}, ${wireInput}> = true;`,
    `export const ${constBase}ParsedInputFitsSource: Assignable<${parsed}, ${sourceInput}> = true;`,
  ];
  if (hasOutputSchema(tool)) {
    const output = `z.input<typeof ${names.toolOutput(tool.name)}>`;
    lines.push(
      `export const ${constBase}OutputMatchesSource: Equals<${output}, Returns<${binding}, ${method}>> = true;`,
    );
  }
  return lines;
}

/** The source-side input type: the object parameter itself, or the positional parameters as an object. */
function expectedInput(tool: ToolIR, params: string): string {
  if (tool.call.some((argument) => argument.kind === 'input')) return `Exclude<${params}[0], undefined>`;
  if (tool.input.kind !== 'object')
    throw new Error(`mcp-taskgen internal error: positional tool '${tool.name}' has a named input type`);
  const members = tool.call.flatMap((argument, index) => {
    if (argument.kind !== 'property') return [];
    const property =
      tool.input.kind === 'object'
        ? tool.input.properties.find((candidate) => candidate.name === argument.name)
        : undefined;
    return [`${propertyKey(argument.name)}${property?.optional ? '?' : ''}: ${params}[${index}]`];
  });
  return members.length > 0 ? `{ ${members.join('; ')} }` : '{}';
}
