/**
 * Stage 3: `ManifestIR` → the generated module's text. Data and wiring only: schemas, the
 * manifest entries and one `invoke` arrow per tool; behaviour stays in the runtime.
 */
import path from 'node:path';
import { generatedHeader } from '../header.js';
import type { CallArgumentIR, ManifestIR, QuestionIR, ToolIR, TypeIR } from '../ir.js';
import { namesReferencedBy, remembered, someType } from '../ir-walk.js';
import { compareStrings } from '../naming.js';
import { type EmitCache, type EmitInputs, fingerprint } from './emit-cache.js';
import { callbackPayloadSchema, questionSchema, toolInputSchema, toolOutputSchema } from './json-schema.js';
import {
  allocateNames,
  enumImports,
  hasOutputSchema,
  type ModuleNames,
  type SchemaUnit,
  schemaUnits,
  unitKey,
} from './names.js';
import {
  arrow,
  type Code,
  call,
  memo,
  object,
  printConst,
  propertyAccess,
  raw,
  stringLiteral,
  value,
} from './printer.js';
import { type ZodContext, type ZodSide, zodObject, zodType } from './zod.js';

export interface ModuleOptions {
  /** The tsconfig directory, which module paths in the IR are relative to (absolute). */
  readonly projectDir: string;
  /** Where the module will be written (absolute). */
  readonly outFile: string;
  /** Code built by earlier runs, for `--watch`: only what an edit changed is built again. */
  readonly cache?: EmitCache;
}

/** The package subpath the generated module imports its helpers from: the manifest format, apart from what users write. */
export const RUNTIME_PACKAGE = 'mcp-task-server/manifest';

export function emitTaskModule(ir: ManifestIR, options: ModuleOptions): string {
  const names = allocateNames(ir);
  const declared = new Set<string>();
  const inputs: EmitInputs = { ir, names, isDeclared: (schemaName) => declared.has(schemaName) };
  const { cache } = options;
  /** Each unit's code is built from `inputs` alone, so that the cache can tell when to build it again. */
  const build = <T>(key: string, own: string, unit: (inputs: EmitInputs) => T): T =>
    cache ? cache.reuse(key, own, inputs, unit) : unit(inputs);

  const namedSchemas = namedSchemaOrder(ir).map((unit) => {
    const side = unit.side === 'both' ? 'input' : unit.side;
    const text = build(`schema ${unitKey(unit)}`, '', (inputs) => namedSchemaConst(unit.typeName, side, inputs));
    declared.add(names.namedSchema(unit.typeName, side));
    return [text];
  });
  const tools = ir.tools.map((tool) =>
    build(`tool ${tool.name}`, fingerprint(tool), (inputs) => ({
      consts: toolSchemaConsts(tool, inputs),
      entry: toolEntry(tool, inputs),
    })),
  );
  const sections: string[][] = [
    generatedHeader(ir.sourceFiles),
    importLines(ir, names, options),
    ...namedSchemas,
    ...tools.map((tool) => tool.consts),
    [printConst('taskManifest', manifest(tools.map((tool) => tool.entry)))],
    toolTypes(ir, names),
  ];
  cache?.endRun();
  return `${sections
    .filter((lines) => lines.length > 0)
    .map((lines) => lines.join('\n'))
    .join('\n\n')}\n`;
}

function zodContext(side: ZodSide, { ir, names, isDeclared }: EmitInputs): ZodContext {
  return {
    side,
    schemaNameOf: (typeName) => names.namedSchema(typeName, side),
    isDeferred: (typeName) => !isDeclared(names.namedSchema(typeName, side)),
    enumBindingOf: names.enumBinding,
    typeOf: (typeName) => ir.types[typeName]?.type,
  };
}

/** `export const AddressSchema = z.object(...)`; built before its own name is declared, so self-references are deferred. */
function namedSchemaConst(typeName: string, side: ZodSide, inputs: EmitInputs): string {
  const definition = inputs.ir.types[typeName] ?? missing(typeName);
  return printConst(inputs.names.namedSchema(typeName, side), memo(zodType(definition.type, zodContext(side, inputs))));
}

/**
 * Import specifier of `module` (relative to `projectDir`) as seen from `fromFile`. Absolute paths
 * go in, only the relative specifier comes out, so the output is the same on every machine.
 */
export function relativeImport(projectDir: string, fromFile: string, module: string): string {
  const from = toPosix(path.dirname(fromFile));
  const target = path.posix.join(toPosix(projectDir), module);
  const relative = path.posix.relative(from, target);
  const specifier = relative.startsWith('.') ? relative : `./${relative}`;
  return specifier.replace(/\.(m|c)?tsx?$/, (_match, flavour: string | undefined) => `.${flavour ?? ''}js`);
}

function toPosix(filePath: string): string {
  return filePath.split(path.sep).join('/');
}

function importLines(ir: ManifestIR, names: ModuleNames, options: ModuleOptions): string[] {
  const helpers = ['defineTaskManifest', 'defineTaskTool', ...(usesUndefinedValue(ir) ? ['undefinedValue'] : [])];
  const lines = [`import { ${helpers.join(', ')} } from '${RUNTIME_PACKAGE}';`, "import { z } from 'zod';"];
  const bySpecifier = new Map<string, Set<string>>();
  const specifiers = new Map<string, string>();
  const add = (module: string, exportName: string, binding: string) => {
    const specifier = specifiers.get(module) ?? relativeImport(options.projectDir, options.outFile, module);
    specifiers.set(module, specifier);
    const clause = binding === exportName ? binding : `${exportName} as ${binding}`;
    bySpecifier.set(specifier, (bySpecifier.get(specifier) ?? new Set()).add(clause));
  };
  for (const { target } of ir.tools) add(target.module, target.exportName, names.classBinding(target));
  for (const [key, exportName] of enumImports(ir)) {
    const module = key.slice(0, key.lastIndexOf('#'));
    add(module, exportName, names.enumBinding(module, exportName));
  }
  for (const specifier of [...bySpecifier.keys()].sort(compareStrings)) {
    const clauses = [...(bySpecifier.get(specifier) ?? [])].sort(compareStrings);
    lines.push(`import { ${clauses.join(', ')} } from ${stringLiteral(specifier)};`);
  }
  return lines;
}

/** Whether some property is a required key that may hold `undefined` (see `undefinedValue`). */
function usesUndefinedValue(ir: ManifestIR): boolean {
  return (
    Object.values(ir.types).some((definition) => hasRequiredUndefinedKey(definition.type)) ||
    ir.tools.some(
      (tool) =>
        hasRequiredUndefinedKey(tool.input) ||
        ('type' in tool.output && hasRequiredUndefinedKey(tool.output.type)) ||
        tool.questions.some((question) => hasRequiredUndefinedKey(question.answer)) ||
        (tool.callbacks ?? []).some((callback) => hasRequiredUndefinedKey(callback.payload)),
    )
  );
}

const requiredUndefinedKeyMemo = new WeakMap<TypeIR, boolean>();

/** In the type itself, not counting named types it refers to (those are checked on their own). */
function hasRequiredUndefinedKey(type: TypeIR): boolean {
  return remembered(requiredUndefinedKeyMemo, type, (own) =>
    someType(
      own,
      (node) =>
        node.kind === 'object' &&
        node.properties.some((property) => property.keyRequired && property.default === undefined),
      () => undefined,
    ),
  );
}

/**
 * Dependencies before dependents (a `const` cannot be used before it is declared), ties by name.
 * A cycle is cut where the walk meets a unit already in progress; that reference becomes a getter.
 */
function namedSchemaOrder(ir: ManifestIR): SchemaUnit[] {
  const units = schemaUnits(ir);
  const byKey = new Map(units.map((unit) => [unitKey(unit), unit]));
  const order: SchemaUnit[] = [];
  const visited = new Set<string>();
  const visit = (unit: SchemaUnit): void => {
    const key = unitKey(unit);
    if (visited.has(key)) return;
    visited.add(key);
    for (const dependency of namesReferencedBy(ir.types[unit.typeName]?.type ?? missing(unit.typeName))) {
      const next =
        byKey.get(unitKey({ typeName: dependency, side: 'both' })) ??
        byKey.get(unitKey({ ...unit, typeName: dependency }));
      if (next) visit(next);
    }
    order.push(unit);
  };
  for (const unit of units) visit(unit);
  return order;
}

function toolSchemaConsts(tool: ToolIR, inputs: EmitInputs): string[] {
  const { names } = inputs;
  const consts = [printConst(names.toolInput(tool.name), memo(zodType(tool.input, zodContext('input', inputs))))];
  if (hasOutputSchema(tool))
    consts.push(printConst(names.toolOutput(tool.name), memo(zodType(tool.output.type, zodContext('output', inputs)))));
  return [consts.join('\n\n')];
}

function manifest(entries: readonly Code[]): Code {
  return call('defineTaskManifest', [
    object([
      ['formatVersion', value(1)],
      ['tools', { kind: 'array', items: entries }],
    ]),
  ]);
}

function toolEntry(tool: ToolIR, inputs: EmitInputs): Code {
  const { ir, names } = inputs;
  const classBinding = names.classBinding(tool.target);
  const inputName = names.toolInput(tool.name);
  const outputSchema = toolOutputSchema(tool, ir);
  const entries: [string, Code][] = [['name', value(tool.name)]];
  if (tool.title !== undefined) entries.push(['title', value(tool.title)]);
  if (tool.description !== undefined) entries.push(['description', value(tool.description)]);
  entries.push(['taskSupport', value(tool.taskSupport)]);
  if (tool.ttlMs !== undefined) entries.push(['ttlMs', value(tool.ttlMs)]);
  if (tool.pollIntervalMs !== undefined) entries.push(['pollIntervalMs', value(tool.pollIntervalMs)]);
  if (tool.concurrency !== undefined) entries.push(['concurrency', value(tool.concurrency)]);
  if (tool.retry !== undefined) entries.push(['retry', value({ ...tool.retry })]);
  if (tool.timeoutMs !== undefined) entries.push(['timeoutMs', value(tool.timeoutMs)]);
  if (tool.unawareClients !== undefined) entries.push(['unawareClients', value(tool.unawareClients)]);
  if (tool.idempotent) entries.push(['idempotent', value(true)]);
  if (tool.priority !== undefined) entries.push(['priority', value(tool.priority)]);
  if (tool.priorityFromCall) entries.push(['priorityFromCall', value(true)]);
  if (tool.version !== undefined) entries.push(['version', value(tool.version)]);
  entries.push(['inputSchema', value(toolInputSchema(tool, ir))]);
  if (outputSchema) entries.push(['outputSchema', value(outputSchema)]);
  entries.push(['input', raw(inputName)]);
  if (hasOutputSchema(tool)) entries.push(['output', raw(names.toolOutput(tool.name))]);
  entries.push(['result', value(tool.output.result)]);
  if (tool.questions.length > 0)
    entries.push([
      'questions',
      { kind: 'array', items: tool.questions.map((question) => questionEntry(question, names)) },
    ]);
  if (tool.callbacks && tool.callbacks.length > 0)
    entries.push([
      'callbacks',
      {
        kind: 'array',
        items: tool.callbacks.map((callback) =>
          object([
            ['name', value(callback.name)],
            ['schema', value(callbackPayloadSchema(callback, inputs.ir))],
            ['payload', zodType(callback.payload, zodContext('input', inputs))],
          ]),
        ),
      },
    ]);
  entries.push([
    'target',
    object([
      ['class', raw(classBinding)],
      ['method', value(tool.target.method)],
    ]),
  ]);
  entries.push(['source', value(tool.source)]);
  entries.push(['invoke', invoke(tool)]);
  return memo(call('defineTaskTool', [object(entries)], `${classBinding}, z.output<typeof ${inputName}>`));
}

function questionEntry(question: QuestionIR, names: ModuleNames): Code {
  const entries: [string, Code][] = [['name', value(question.name)]];
  if (question.message !== undefined) entries.push(['message', value(question.message)]);
  entries.push(['schema', value(questionSchema(question))]);
  if (question.upfront) entries.push(['upfront', value(true)]);
  // Answers are flat objects of primitives (the reader checks), so they never refer to named schemas.
  entries.push([
    'answer',
    zodObject(question.answer, {
      side: 'input',
      schemaNameOf: (typeName) => names.namedSchema(typeName, 'input'),
      isDeferred: () => false,
      enumBindingOf: names.enumBinding,
      typeOf: () => undefined,
    }),
  ]);
  return object(entries);
}

/** `(target, args, ctx) => target.method(args.a, ctx)`; unused parameters get a `_` prefix. */
function invoke(tool: ToolIR): Code {
  const usesArgs = tool.call.some((argument) => argument.kind !== 'context');
  const usesContext = tool.call.some((argument) => argument.kind === 'context');
  const params = ['target', usesArgs ? 'args' : '_args', usesContext ? 'ctx' : '_ctx'];
  const callArguments = tool.call.map(callArgument).join(', ');
  return arrow(params, raw(`${propertyAccess('target', tool.target.method)}(${callArguments})`));
}

function callArgument(argument: CallArgumentIR): string {
  switch (argument.kind) {
    case 'property':
      return propertyAccess('args', argument.name);
    case 'input':
      return 'args';
    case 'context':
      return 'ctx';
  }
}

/**
 * `export type TaskTools = { tool: { input; output } }`: each tool's arguments (as a caller
 * writes them) and its method's result, by wire name, so `TaskContext<Questions, TaskTools>`
 * type-checks `ctx.spawn(name, args)` and `child.result()` against the tools themselves.
 */
function toolTypes(ir: ManifestIR, names: ModuleNames): string[] {
  if (ir.tools.length === 0) return [];
  const members = [...ir.tools]
    .sort((a, b) => compareStrings(a.name, b.name))
    .map((tool) => {
      const key = /^[A-Za-z_$][\w$]*$/.test(tool.name) ? tool.name : stringLiteral(tool.name);
      const input = `z.input<typeof ${names.toolInput(tool.name)}>`;
      return `  readonly ${key}: { readonly input: ${input}; readonly output: ${outputType(tool, names)} };`;
    });
  return [
    "/** Each tool's arguments and result by name: `TaskContext<Questions, TaskTools>` types `ctx.spawn` with it. */",
    // A type literal, not an interface: it then fits the default `ToolMap` too, so a typed
    // context can be passed wherever a plain `TaskContext` is taken.
    'export type TaskTools = {',
    ...members,
    '};',
  ];
}

/** What a spawned child of `tool` resolves `result()` with (see `childResult`). */
function outputType(tool: ToolIR, names: ModuleNames): string {
  if (hasOutputSchema(tool)) return `z.output<typeof ${names.toolOutput(tool.name)}>`;
  switch (tool.output.result) {
    case 'text':
      return 'string';
    case 'none':
      return 'undefined';
    default:
      return 'Readonly<Record<string, unknown>>';
  }
}

function missing(typeName: string): never {
  throw new Error(`mcp-taskgen internal error: type '${typeName}' is referenced but not defined`);
}
