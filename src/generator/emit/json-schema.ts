/**
 * `TypeIR` → JSON Schema (draft 2020-12) values. Every schema is self-contained: named types a
 * schema uses are copied into its own `$defs`, so clients never resolve references across tools.
 *
 * The side matters only for objects: input schemas leave extra keys open (zod strips them), output
 * schemas close them and list defaulted properties as required (zod fills them in).
 */
import type {
  CallbackIR,
  JsonValue,
  ManifestIR,
  NamedTypeIR,
  ObjectTypeIR,
  PropertyIR,
  QuestionIR,
  RefTypeIR,
  ToolIR,
  TypeIR,
  UnionTypeIR,
} from '../ir.js';
import { compareStrings } from '../naming.js';

type JsonObject = { [key: string]: JsonValue };

export type SchemaSide = 'input' | 'output';

const DEFS_PREFIX = '#/$defs/';

export function toolInputSchema(tool: ToolIR, ir: ManifestIR): JsonObject {
  return topLevelSchema(tool.input, 'input', ir);
}

/**
 * Only `structured` results have an output schema: MCP requires it to describe an object. Other
 * results are still validated at run time, by the zod schema alone.
 */
export function toolOutputSchema(tool: ToolIR, ir: ManifestIR): JsonObject | undefined {
  const { output } = tool;
  if (output.result !== 'structured') return undefined;
  if (output.type.kind === 'union') return topLevelUnionSchema(output.type, ir);
  if (output.type.kind !== 'object' && output.type.kind !== 'ref') return undefined;
  return topLevelSchema(output.type, 'output', ir);
}

/** A union of objects as a top-level output schema: MCP wants `type: 'object'` at the top. */
function topLevelUnionSchema(type: UnionTypeIR, ir: ManifestIR): JsonObject {
  const builder = new SchemaBuilder('output', ir);
  const { type: _type, ...branches } = builder.union(type);
  const defs = builder.definitions();
  return { type: 'object', ...branches, ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}) };
}

/** Elicitation's restricted schema: a flat object, no references. */
export function questionSchema(question: QuestionIR): JsonObject {
  return new SchemaBuilder('input', { sourceFiles: [], types: {}, tools: [] }).object(question.answer);
}

/** The JSON Schema of a callback's payload, with the named types it uses in `$defs`. */
export function callbackPayloadSchema(callback: CallbackIR, ir: ManifestIR): JsonObject {
  return topLevelSchema(callback.payload, 'input', ir);
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

  union(type: UnionTypeIR): JsonObject {
    const members = type.members.map((member) => this.type(member));
    return type.discriminator !== undefined
      ? { type: 'object', oneOf: members, discriminator: { propertyName: type.discriminator } }
      : { anyOf: members };
  }

  private property(property: PropertyIR): JsonObject {
    let schema = this.type(property.type);
    if (property.description !== undefined) schema = withDescription(schema, property.description);
    if (property.title !== undefined) schema = withAnnotation(schema, 'title', property.title);
    return {
      ...schema,
      ...(property.default !== undefined ? { default: property.default } : {}),
      ...(property.examples !== undefined ? { examples: [...property.examples] } : {}),
      ...(property.deprecated ? { deprecated: true } : {}),
    };
  }

  private isRequired(property: PropertyIR): boolean {
    return this.side === 'output' ? !property.optional || property.default !== undefined : !property.optional;
  }

  private type(type: TypeIR): JsonObject {
    switch (type.kind) {
      case 'string':
        return pick({ type: 'string', ...type }, ['type', 'format', 'minLength', 'maxLength', 'pattern']);
      case 'number':
      case 'integer':
        return pick({ ...type, type: type.kind }, [
          'type',
          'minimum',
          'maximum',
          'exclusiveMinimum',
          'exclusiveMaximum',
        ]);
      case 'boolean':
      case 'null':
        return { type: type.kind };
      case 'enum':
        return { type: 'string', enum: [...type.values] };
      case 'literal':
      case 'native-enum': {
        const values = type.kind === 'literal' ? [...type.values] : type.members.map((member) => member.value);
        const valueType = commonJsonType(values);
        const only = values[0];
        return {
          ...(valueType ? { type: valueType } : {}),
          ...(values.length === 1 && only !== undefined ? { const: only } : { enum: values }),
        };
      }
      case 'template':
        return { type: 'string', pattern: type.pattern };
      case 'date-time':
        return { type: 'string', format: 'date-time' };
      case 'array':
        return {
          type: 'array',
          items: this.type(type.items),
          ...(type.minItems !== undefined ? { minItems: type.minItems } : {}),
          ...(type.maxItems !== undefined ? { maxItems: type.maxItems } : {}),
        };
      case 'tuple':
        return {
          type: 'array',
          prefixItems: type.items.map((item) => this.type(item)),
          items: type.rest ? this.type(type.rest) : false,
          minItems: type.items.length,
        };
      case 'object':
        return this.object(type);
      case 'record':
        return {
          type: 'object',
          ...(type.key.kind === 'template' ? { propertyNames: { type: 'string', pattern: type.key.pattern } } : {}),
          additionalProperties: this.type(type.values),
        };
      case 'union':
        return this.union(type);
      case 'brand':
        return this.type(type.base);
      case 'unknown':
        return {};
      case 'ref':
        this.referenced.add(type.name);
        return { $ref: `${DEFS_PREFIX}${type.name}` };
    }
  }
}

/** The keys of `source` that are set, in the order given. */
function pick(source: { readonly [key: string]: unknown }, keys: readonly string[]): JsonObject {
  const picked: JsonObject = {};
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key] as JsonValue;
  return picked;
}

/** `number` when every value is a number, and so on; `undefined` for a mix. */
function commonJsonType(values: readonly (string | number | boolean)[]): string | undefined {
  const types = new Set(values.map((value) => typeof value));
  const [only] = types;
  return types.size === 1 ? only : undefined;
}

/** Puts an annotation right after `type`/`$ref` (and any earlier annotation), where readers look for it. */
function withAnnotation(schema: JsonObject, key: string, text: string): JsonObject {
  const [first, ...rest] = Object.entries(schema);
  return Object.fromEntries([...(first ? [first] : []), [key, text], ...rest]);
}

function withDescription(schema: JsonObject, description: string): JsonObject {
  return withAnnotation(schema, 'description', description);
}

function resolve(ir: ManifestIR, name: string): NamedTypeIR {
  const definition = ir.types[name];
  if (!definition) throw new Error(`mcp-taskgen internal error: type '${name}' is referenced but not defined`);
  return definition;
}
