/**
 * Identifiers in the generated module. Allocated in one fixed order (classes, named schemas,
 * tool schemas) so that a clash is resolved the same way on every run: the later name gets a
 * numeric suffix.
 */
import type { ManifestIR, TargetIR, ToolIR, TypeIR } from '../ir.js';
import { namesReferencedBy, remembered, someType } from '../ir-walk.js';
import { compareStrings, toPascalCase } from '../naming.js';
import type { ZodSide } from './zod.js';

/** Names the module itself binds; user names must not shadow them. */
const RESERVED = ['z', 'defineTaskManifest', 'defineTaskTool', 'taskManifest'];

export interface ModuleNames {
  /** Local binding of an imported class, by `module#exportName`. */
  readonly classBinding: (target: TargetIR) => string;
  /** Local binding of an imported TS enum. */
  readonly enumBinding: (module: string, exportName: string) => string;
  /** `AddressSchema`, by named-type name; `EventInputSchema` for a type that differs by side. */
  readonly namedSchema: (typeName: string, side: ZodSide) => string;
  /** `BuildReportInput`, by tool name. */
  readonly toolInput: (toolName: string) => string;
  /** `BuildReportOutput`, by tool name, for tools whose result is validated. */
  readonly toolOutput: (toolName: string) => string;
}

/** One named schema constant: a named type for one side, or for both when the sides agree. */
export interface SchemaUnit {
  readonly typeName: string;
  readonly side: ZodSide | 'both';
}

/** Tools whose return value the runtime validates with a zod schema. */
export function hasOutputSchema(tool: ToolIR): tool is ToolIR & { output: { type: TypeIR } } {
  return tool.output.result === 'structured' || tool.output.result === 'json';
}

/**
 * The named schema constants the module declares, sorted. A type containing a `Date` parses
 * differently per side (string → Date in, Date → string out), so it gets a constant per side
 * it is used on; every other type gets one constant shared by both.
 */
export function schemaUnits(ir: ManifestIR): readonly SchemaUnit[] {
  return remembered(schemaUnitsMemo, ir, computeSchemaUnits);
}

const schemaUnitsMemo = new WeakMap<ManifestIR, readonly SchemaUnit[]>();

function computeSchemaUnits(ir: ManifestIR): SchemaUnit[] {
  const resolve = (name: string) => ir.types[name]?.type;
  const sidedNames = typesReaching(ir, containsDate);
  const sided = (name: string) => sidedNames.has(name);
  const used = new Map<string, Set<ZodSide>>();
  const visit = (type: TypeIR, side: ZodSide): void => {
    for (const name of namesReferencedBy(type)) {
      const sides = used.get(name) ?? new Set();
      if (sides.has(side)) continue;
      used.set(name, sides.add(side));
      const target = resolve(name);
      if (target) visit(target, side);
    }
  };
  for (const tool of ir.tools) {
    visit(tool.input, 'input');
    if (hasOutputSchema(tool)) visit(tool.output.type, 'output');
    for (const callback of tool.callbacks ?? []) visit(callback.payload, 'input');
  }
  const units: SchemaUnit[] = [];
  for (const name of Object.keys(ir.types).sort(compareStrings)) {
    if (!sided(name)) units.push({ typeName: name, side: 'both' });
    else
      for (const side of ['input', 'output'] as const)
        if (used.get(name)?.has(side)) units.push({ typeName: name, side });
  }
  return units;
}

const dateMemo = new WeakMap<TypeIR, boolean>();

/** Whether a `Date` is in the type itself, not counting named types it refers to. */
function containsDate(type: TypeIR): boolean {
  return remembered(dateMemo, type, (own) => someType(own, (node) => node.kind === 'date-time', noReferences));
}

const noReferences = () => undefined;

/**
 * The named types for which `holds` is true of the type itself or of a named type it refers to,
 * however indirectly (cycles included): a walk backwards along references from where it holds.
 */
function typesReaching(ir: ManifestIR, holds: (type: TypeIR) => boolean): Set<string> {
  const referrers = new Map<string, string[]>();
  const reached: string[] = [];
  for (const [name, definition] of Object.entries(ir.types)) {
    if (holds(definition.type)) reached.push(name);
    for (const target of namesReferencedBy(definition.type))
      referrers.set(target, [...(referrers.get(target) ?? []), name]);
  }
  const result = new Set(reached);
  for (let name = reached.pop(); name !== undefined; name = reached.pop()) {
    for (const referrer of referrers.get(name) ?? []) {
      if (result.has(referrer)) continue;
      result.add(referrer);
      reached.push(referrer);
    }
  }
  return result;
}

export function unitKey(unit: SchemaUnit): string {
  return `${unit.side}:${unit.typeName}`;
}

/** Hands out module-level identifiers: the preferred name, or it with the first free suffix (2, 3, …). */
export function identifierAllocator(reserved: readonly string[]): (preferred: string) => string {
  const used = new Set(reserved);
  return (preferred) => {
    let candidate = preferred;
    for (let suffix = 2; used.has(candidate); suffix++) candidate = `${preferred}${suffix}`;
    used.add(candidate);
    return candidate;
  };
}

export function allocateNames(ir: ManifestIR): ModuleNames {
  const allocate = identifierAllocator(RESERVED);

  const classes = new Map<string, string>();
  const targets = [...new Map(ir.tools.map((tool) => [classKey(tool.target), tool.target])).values()];
  targets.sort((a, b) => compareStrings(classKey(a), classKey(b)));
  for (const target of targets) classes.set(classKey(target), allocate(target.exportName));

  const enums = new Map<string, string>();
  for (const [key, exportName] of [...enumImports(ir)].sort(([a], [b]) => compareStrings(a, b)))
    enums.set(key, allocate(exportName));

  const schemas = new Map<string, string>();
  const units = schemaUnits(ir);
  for (const unit of units) {
    const side = unit.side === 'both' ? '' : unit.side === 'input' ? 'Input' : 'Output';
    schemas.set(unitKey(unit), allocate(`${toPascalCase(unit.typeName)}${side}Schema`));
  }

  const inputs = new Map<string, string>();
  const outputs = new Map<string, string>();
  for (const tool of ir.tools) {
    const base = toPascalCase(tool.name);
    inputs.set(tool.name, allocate(`${base}Input`));
    if (hasOutputSchema(tool)) outputs.set(tool.name, allocate(`${base}Output`));
  }

  return {
    classBinding: (target) => lookup(classes, classKey(target)),
    enumBinding: (module, exportName) => lookup(enums, `${module}#${exportName}`),
    namedSchema: (typeName, side) =>
      schemas.get(unitKey({ typeName, side: 'both' })) ?? lookup(schemas, unitKey({ typeName, side })),
    toolInput: (toolName) => lookup(inputs, toolName),
    toolOutput: (toolName) => lookup(outputs, toolName),
  };
}

/** Every TS enum the schemas use, as `module#exportName` → export name. */
export function enumImports(ir: ManifestIR): ReadonlyMap<string, string> {
  return remembered(enumImportsMemo, ir, (manifest) => {
    const found = new Map<string, string>();
    const collect = (type: TypeIR) => {
      for (const [key, exportName] of enumsIn(type)) found.set(key, exportName);
    };
    for (const definition of Object.values(manifest.types)) collect(definition.type);
    for (const tool of manifest.tools) {
      collect(tool.input);
      if ('type' in tool.output) collect(tool.output.type);
      for (const question of tool.questions) collect(question.answer);
      for (const callback of tool.callbacks ?? []) collect(callback.payload);
    }
    return found;
  });
}

const enumImportsMemo = new WeakMap<ManifestIR, ReadonlyMap<string, string>>();
const enumsMemo = new WeakMap<TypeIR, readonly (readonly [key: string, exportName: string])[]>();

/** The TS enums in a type itself (not in named types it refers to). */
function enumsIn(type: TypeIR): readonly (readonly [key: string, exportName: string])[] {
  return remembered(enumsMemo, type, (own) => {
    const found: [string, string][] = [];
    someType(
      own,
      (node) => {
        if (node.kind === 'native-enum') found.push([`${node.module}#${node.exportName}`, node.exportName]);
        return false;
      },
      noReferences,
    );
    return found;
  });
}

function classKey(target: TargetIR): string {
  return `${target.module}#${target.exportName}`;
}

function lookup(names: ReadonlyMap<string, string>, key: string): string {
  const name = names.get(key);
  if (name === undefined) throw new Error(`mcp-taskgen internal error: no identifier allocated for '${key}'`);
  return name;
}
