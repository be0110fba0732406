/**
 * `TypeIR` → JSON Schema (draft 2020-12) values. Every schema is self-contained: named types a
 * schema uses are copied into its own `$defs`, so clients never resolve references across tools.
 *
 * The side matters only for objects: input schemas leave extra keys open (zod strips them), output
 * schemas close them and list defaulted properties as required (zod fills them in).
 */
import type {
  JsonValue,
  ManifestIR,
  NamedTypeIR,
  ObjectTypeIR,
  PropertyIR,
  QuestionIR,
  RefTypeIR,
  ToolIR,
  TypeIR,
} from '../ir.js';
import { compareStrings } from '../naming.js';

type JsonObject = { [key: string]: JsonValue };

export type SchemaSide = 'input' | 'output';

const DEFS_PREFIX = '#/$defs/';

export function toolInputSchema(tool: ToolIR, ir: ManifestIR): JsonObject {
  return topLevelSchema(tool.input, 'input', ir);
}

/** Only `structured` results have an output schema: MCP requires it to describe an object. */
export function toolOutputSchema(tool: ToolIR, ir: ManifestIR): JsonObject | undefined {
  const { output } = tool;
  if (output.result !== 'structured') return undefined;
  if (output.type.kind !== 'object' && output.type.kind !== 'ref') return undefined;
  return topLevelSchema(output.type, 'output', ir);
}

/** Elicitation's restricted schema: a flat object, no references. */
export function questionSchema(question: QuestionIR): JsonObject {
  return new SchemaBuilder('input', { sourceFiles: [], types: {}, tools: [] }).object(question.answer);
}

function topLevelSchema(type: ObjectTypeIR | RefTypeIR, side: SchemaSide, ir: ManifestIR): JsonObject {
  const builder = new SchemaBuilder(side, ir);
  const schema = type.kind === 'ref' ? builder.named(resolve(ir, type.name)) : builder.object(type);
  const defs = builder.definitions();
  return Object.keys(defs).length > 0 ? { ...schema, $defs: defs } : schema;
}

class SchemaBuilder {
  private readonly referenced = new Set<string>();

  constructor(
    private readonly side: SchemaSide,
    private readonly ir: ManifestIR,
  ) {}

  /** A named type's body with its description, as at the top level or in `$defs`. */
  named(definition: NamedTypeIR): JsonObject {
    const body = this.object(definition.type);
    return definition.description !== undefined ? withDescription(body, definition.description) : body;
  }

  object(type: ObjectTypeIR): JsonObject {
    const properties: JsonObject = {};
    for (const property of type.properties) properties[property.name] = this.property(property);
    const required = type.properties.filter((property) => this.isRequired(property)).map((property) => property.name);
    return {
      type: 'object',
      properties,
      ...(required.length > 0 ? { required } : {}),
      ...(this.side === 'output' ? { additionalProperties: false } : {}),
    };
  }

  /** Every named type referenced so far, transitively, sorted by name. */
  definitions(): JsonObject {
    const defs: JsonObject = {};
    const done = new Set<string>();
    // Building one definition may reference more; repeat until nothing new appears.
    while (done.size < this.referenced.size) {
      for (const name of [...this.referenced].sort(compareStrings)) {
        if (done.has(name)) continue;
        done.add(name);
        defs[name] = this.named(resolve(this.ir, name));
      }
    }
    return Object.fromEntries(Object.entries(defs).sort(([a], [b]) => compareStrings(a, b)));
  }

  private property(property: PropertyIR): JsonObject {
    let schema = this.type(property.type);
    if (property.description !== undefined) schema = withDescription(schema, property.description);
    return property.default !== undefined ? { ...schema, default: property.default } : schema;
  }

  private isRequired(property: PropertyIR): boolean {
    return this.side === 'output' ? !property.optional || property.default !== undefined : !property.optional;
  }

  private type(type: TypeIR): JsonObject {
    switch (type.kind) {
      case 'string':
      case 'number':
      case 'integer':
      case 'boolean':
        return { type: type.kind };
      case 'enum':
        return { type: 'string', enum: [...type.values] };
      case 'array':
        return { type: 'array', items: this.type(type.items) };
      case 'object':
        return this.object(type);
      case 'ref':
        this.referenced.add(type.name);
        return { $ref: `${DEFS_PREFIX}${type.name}` };
    }
  }
}

/** Puts `description` right after `type`/`$ref`, where readers look for it. */
function withDescription(schema: JsonObject, description: string): JsonObject {
  const [first, ...rest] = Object.entries(schema);
  return Object.fromEntries([...(first ? [first] : []), ['description', description], ...rest]);
}

function resolve(ir: ManifestIR, name: string): NamedTypeIR {
  const definition = ir.types[name];
  if (!definition) throw new Error(`mcp-taskgen internal error: type '${name}' is referenced but not defined`);
  return definition;
}
