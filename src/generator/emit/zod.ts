/**
 * `TypeIR` → zod 4 expressions. Objects are `z.object` (unknown keys are stripped): the input
 * JSON Schema therefore leaves `additionalProperties` open, and the output JSON Schema closes it,
 * because what reaches the client is the stripped value. This matches `z.toJSONSchema`'s own
 * input/output views of a `z.object`.
 */
import type { JsonValue, ObjectTypeIR, PropertyIR, TypeIR } from '../ir.js';
import { arrow, type Code, call, method, object, raw, value } from './printer.js';

/** Resolves a named type to the identifier of its schema constant. */
export type SchemaNameOf = (typeName: string) => string;

export function zodType(type: TypeIR, schemaNameOf: SchemaNameOf): Code {
  switch (type.kind) {
    case 'string':
      return raw('z.string()');
    case 'number':
      return raw('z.number()');
    case 'integer':
      return raw('z.int()');
    case 'boolean':
      return raw('z.boolean()');
    case 'enum':
      return call('z.enum', [value([...type.values])]);
    case 'array': {
      const array = call('z.array', [zodType(type.items, schemaNameOf)]);
      // Keeps `z.output` assignable to a `readonly T[]` parameter and back.
      return type.readonly ? method(array, 'readonly') : array;
    }
    case 'object':
      return zodObject(type, schemaNameOf);
    case 'ref':
      return raw(schemaNameOf(type.name));
  }
}

export function zodObject(type: ObjectTypeIR, schemaNameOf: SchemaNameOf): Code {
  return call('z.object', [
    object(type.properties.map((property) => [property.name, zodProperty(property, schemaNameOf)] as const)),
  ]);
}

function zodProperty(property: PropertyIR, schemaNameOf: SchemaNameOf): Code {
  const base = zodType(property.type, schemaNameOf);
  if (property.default !== undefined) return method(base, 'default', [defaultValue(property.default)]);
  return property.optional ? method(base, 'optional') : base;
}

/** Objects and arrays through a factory, so that no two parses share (and mutate) one default. */
function defaultValue(json: JsonValue): Code {
  return json !== null && typeof json === 'object' ? arrow([], value(json)) : value(json);
}
