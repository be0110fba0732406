/**
 * Identifiers in the generated module. Allocated in one fixed order (classes, named schemas,
 * tool schemas) so that a clash is resolved the same way on every run: the later name gets a
 * numeric suffix.
 */
import type { ManifestIR, TargetIR } from '../ir.js';
import { compareStrings, toPascalCase } from '../naming.js';

/** Names the module itself binds; user names must not shadow them. */
const RESERVED = ['z', 'defineTaskManifest', 'defineTaskTool', 'taskManifest'];

export interface ModuleNames {
  /** Local binding of an imported class, by `module#exportName`. */
  readonly classBinding: (target: TargetIR) => string;
  /** `AddressSchema`, by named-type name. */
  readonly namedSchema: (typeName: string) => string;
  /** `BuildReportInput`, by tool name. */
  readonly toolInput: (toolName: string) => string;
  /** `BuildReportOutput`, by tool name. */
  readonly toolOutput: (toolName: string) => string;
}

export function allocateNames(ir: ManifestIR): ModuleNames {
  const used = new Set(RESERVED);
  const allocate = (preferred: string): string => {
    let candidate = preferred;
    for (let suffix = 2; used.has(candidate); suffix++) candidate = `${preferred}${suffix}`;
    used.add(candidate);
    return candidate;
  };

  const classes = new Map<string, string>();
  const targets = [...new Map(ir.tools.map((tool) => [classKey(tool.target), tool.target])).values()];
  targets.sort((a, b) => compareStrings(classKey(a), classKey(b)));
  for (const target of targets) classes.set(classKey(target), allocate(target.exportName));

  const schemas = new Map<string, string>();
  for (const name of Object.keys(ir.types).sort(compareStrings))
    schemas.set(name, allocate(`${toPascalCase(name)}Schema`));

  const inputs = new Map<string, string>();
  const outputs = new Map<string, string>();
  for (const tool of ir.tools) {
    const base = toPascalCase(tool.name);
    inputs.set(tool.name, allocate(`${base}Input`));
    if (tool.output.result === 'structured') outputs.set(tool.name, allocate(`${base}Output`));
  }

  return {
    classBinding: (target) => lookup(classes, classKey(target)),
    namedSchema: (typeName) => lookup(schemas, typeName),
    toolInput: (toolName) => lookup(inputs, toolName),
    toolOutput: (toolName) => lookup(outputs, toolName),
  };
}

function classKey(target: TargetIR): string {
  return `${target.module}#${target.exportName}`;
}

function lookup(names: ReadonlyMap<string, string>, key: string): string {
  const name = names.get(key);
  if (name === undefined) throw new Error(`mcp-taskgen internal error: no identifier allocated for '${key}'`);
  return name;
}
