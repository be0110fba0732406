/**
 * `TypeIR` → zod 4 expressions. Objects are `z.object` (unknown keys are stripped): the input
 * JSON Schema therefore leaves `additionalProperties` open, and the output JSON Schema closes it,
 * because what reaches the client is the stripped value. This matches `z.toJSONSchema`'s own
 * input/output views of a `z.object`.
 *
 * Sides: an input schema parses the wire into what the method takes (`z.input` is the wire);
 * an output schema parses what the method returned into the wire (`z.output` is the wire). The
 * two differ only for `Date`, which is a string on the wire and a `Date` in the method.
 *
 * Recursion: a reference to a named schema that is not declared yet (itself, or a later member
 * of a cycle) sits in a getter, zod 4's way to defer it (`get children() { return ... }`); zod
 * resolves it on first use and TypeScript still infers the types, so no annotation is needed.
 */
import type { JsonValue, ObjectTypeIR, PropertyIR, StringTypeIR, TypeIR } from '../ir.js';
import { someType } from '../ir-walk.js';
import {
  arrow,
  type Code,
  call,
  getter,
  method,
  object,
  printFlat,
  propertyAccess,
  raw,
  stringLiteral,
  value,
} from './printer.js';

export type ZodSide = 'input' | 'output';

export interface ZodContext {
  readonly side: ZodSide;
  /** Resolves a named type to the identifier of its schema constant for this side. */
  readonly schemaNameOf: (typeName: string) => string;
  /** Whether that constant is declared after the code being emitted, so must be deferred. */
  readonly isDeferred: (typeName: string) => boolean;
  /** The local binding of an imported TS enum. */
  readonly enumBindingOf: (module: string, exportName: string) => string;
  /** The definition of a named type, to write defaults inside it. */
  readonly typeOf: (typeName: string) => TypeIR | undefined;
}

const STRING_FORMATS: Readonly<Record<NonNullable<StringTypeIR['format']>, string>> = {
  email: 'z.email()',
  uri: 'z.url()',
  uuid: 'z.uuid()',
  date: 'z.iso.date()',
  // RFC 3339, as JSON Schema's `date-time`: an offset or `Z` is required, and both are accepted.
  'date-time': 'z.iso.datetime({ offset: true })',
};

export function zodType(type: TypeIR, context: ZodContext): Code {
  switch (type.kind) {
    case 'string':
      return zodString(type);
    case 'number':
    case 'integer': {
      let schema = raw(type.kind === 'integer' ? 'z.int()' : 'z.number()');
      if (type.minimum !== undefined) schema = method(schema, 'min', [value(type.minimum)]);
      if (type.maximum !== undefined) schema = method(schema, 'max', [value(type.maximum)]);
      if (type.exclusiveMinimum !== undefined) schema = method(schema, 'gt', [value(type.exclusiveMinimum)]);
      if (type.exclusiveMaximum !== undefined) schema = method(schema, 'lt', [value(type.exclusiveMaximum)]);
      return schema;
    }
    case 'boolean':
      return raw('z.boolean()');
    case 'null':
      return raw('z.null()');
    case 'unknown':
      return raw('z.unknown()');
    case 'enum':
      return call('z.enum', [value([...type.values])]);
    case 'literal': {
      const [only] = type.values;
      return call('z.literal', [
        type.values.length === 1 && only !== undefined ? value(only) : value([...type.values]),
      ]);
    }
    case 'native-enum': {
      const binding = context.enumBindingOf(type.module, type.exportName);
      if (type.whole) return call('z.enum', [raw(binding)]);
      const members = type.members.map((member) => raw(propertyAccess(binding, member.name)));
      const [only] = members;
      return call('z.literal', [members.length === 1 && only ? only : { kind: 'array', items: members }]);
    }
    case 'template':
      return call('z.templateLiteral', [
        {
          kind: 'array',
          items: type.parts.map((part) => (part.kind === 'text' ? value(part.text) : raw(`z.${part.kind}()`))),
        },
      ]);
    case 'date-time':
      return context.side === 'input'
        ? raw('z.iso.datetime({ offset: true }).transform((value) => new Date(value))')
        : raw('z.date().transform((value) => value.toISOString())');
    case 'array': {
      let array = call('z.array', [zodType(type.items, context)]);
      if (type.minItems !== undefined) array = method(array, 'min', [value(type.minItems)]);
      if (type.maxItems !== undefined) array = method(array, 'max', [value(type.maxItems)]);
      // Keeps `z.output` assignable to a `readonly T[]` parameter and back.
      return type.readonly ? method(array, 'readonly') : array;
    }
    case 'tuple': {
      const items: Code = { kind: 'array', items: type.items.map((item) => zodType(item, context)) };
      const tuple = call('z.tuple', type.rest ? [items, zodType(type.rest, context)] : [items]);
      return type.readonly ? method(tuple, 'readonly') : tuple;
    }
    case 'object':
      return zodObject(type, context);
    case 'record':
      return call('z.record', [zodType(type.key, context), zodType(type.values, context)]);
    case 'union': {
      const members = type.members.filter((member) => member.kind !== 'null');
      const only = members[0];
      // `T | null` reads better as `T.nullable()`, and is the same schema.
      if (members.length === 1 && only) return method(zodType(only, context), 'nullable');
      const items: Code = { kind: 'array', items: type.members.map((member) => zodType(member, context)) };
      return type.discriminator !== undefined
        ? call('z.discriminatedUnion', [value(type.discriminator), items])
        : call('z.union', [items]);
    }
    case 'brand': {
      // A brand exists only in the type system: validate the base, and type the result as branded.
      const branded = `${type.base.kind === 'integer' ? 'number' : type.base.kind} & { ${type.brand
        .map((member) => `${member.name}${member.optional ? '?' : ''}: ${printFlat(value(member.value))}`)
        .join('; ')} }`;
      return raw(`(${printFlat(zodType(type.base, context))} as unknown as z.ZodType<${branded}, ${branded}>)`);
    }
    case 'ref':
      return raw(context.schemaNameOf(type.name));
  }
}

export function zodObject(type: ObjectTypeIR, context: ZodContext): Code {
  return call('z.object', [
    object(
      type.properties.map((property) => {
        const schema = zodProperty(property, context);
        const deferred = someType(
          property.type,
          (candidate) => candidate.kind === 'ref' && context.isDeferred(candidate.name),
          () => undefined,
        );
        return [property.name, deferred ? getter(schema) : schema] as const;
      }),
    ),
  ]);
}

function zodString(type: StringTypeIR): Code {
  let schema = raw(type.format ? STRING_FORMATS[type.format] : 'z.string()');
  if (type.minLength !== undefined) schema = method(schema, 'min', [value(type.minLength)]);
  if (type.maxLength !== undefined) schema = method(schema, 'max', [value(type.maxLength)]);
  // The `u` flag: JSON Schema validators (ajv) compile `pattern` as a Unicode regular expression.
  if (type.pattern !== undefined)
    schema = method(schema, 'regex', [raw(`new RegExp(${stringLiteral(type.pattern)}, 'u')`)]);
  return schema;
}

function zodProperty(property: PropertyIR, context: ZodContext): Code {
  const base = zodType(property.type, context);
  if (property.default !== undefined)
    return method(base, 'default', [defaultValue(property.default, property.type, context)]);
  if (!property.optional) return base;
  // `key: T | undefined` (no `?`): absent on the wire, but a key the method's type requires.
  return property.keyRequired ? call('undefinedValue', [base]) : method(base, 'optional');
}

/** Objects and arrays through a factory, so that no two parses share (and mutate) one default. */
function defaultValue(json: JsonValue, type: TypeIR, context: ZodContext): Code {
  const code = typedValue(json, type, context, 0);
  return json !== null && typeof json === 'object' ? arrow([], code) : code;
}

/**
 * A JSON value as code of the given type: a TS enum's value is written as its member
 * (`Currency.Euro`), because the string `'EUR'` is not a `Currency` to the compiler.
 */
function typedValue(json: JsonValue, type: TypeIR, context: ZodContext, depth: number): Code {
  if (depth > 32) return value(json);
  const next = (item: JsonValue, itemType: TypeIR | undefined): Code =>
    itemType ? typedValue(item, itemType, context, depth + 1) : value(item);
  switch (type.kind) {
    case 'native-enum': {
      const member = type.members.find((candidate) => candidate.value === json);
      return member
        ? raw(propertyAccess(context.enumBindingOf(type.module, type.exportName), member.name))
        : value(json);
    }
    case 'array':
      return Array.isArray(json) ? { kind: 'array', items: json.map((item) => next(item, type.items)) } : value(json);
    case 'tuple':
      return Array.isArray(json)
        ? { kind: 'array', items: json.map((item, index) => next(item, type.items[index] ?? type.rest)) }
        : value(json);
    case 'record':
      return isJsonObject(json)
        ? object(Object.entries(json).map(([key, item]) => [key, next(item, type.values)] as const))
        : value(json);
    case 'object':
      return isJsonObject(json)
        ? object(
            Object.entries(json).map(
              ([key, item]) => [key, next(item, type.properties.find((p) => p.name === key)?.type)] as const,
            ),
          )
        : value(json);
    case 'ref': {
      const target = context.typeOf(type.name);
      return target ? next(json, target) : value(json);
    }
    case 'union': {
      // The enum member that holds this value, if any; other members print the value as it is.
      const holder = type.members.find(
        (member) => member.kind === 'native-enum' && member.members.some((candidate) => candidate.value === json),
      );
      return holder ? next(json, holder) : value(json);
    }
    default:
      return value(json);
  }
}

function isJsonObject(json: JsonValue): json is { [key: string]: JsonValue } {
  return json !== null && typeof json === 'object' && !Array.isArray(json);
}
