/**
 * Structural traversal of `TypeIR`, shared by the reader (renaming references) and the emitters
 * (dependency order, "does this contain a Date"). One place knows which kinds have children, so
 * a new kind cannot be forgotten by one of the walks.
 */
import type { TypeIR } from './ir.js';

/** The direct children of a type, in a fixed order. */
export function childTypes(type: TypeIR): TypeIR[] {
  switch (type.kind) {
    case 'array':
      return [type.items];
    case 'tuple':
      return type.rest ? [...type.items, type.rest] : [...type.items];
    case 'object':
      return type.properties.map((property) => property.type);
    case 'record':
      return [type.values];
    case 'union':
      return [...type.members];
    default:
      return [];
  }
}

/** Rebuilds a type with `transform` applied to every child, bottom-up, then to the type itself. */
export function mapType(type: TypeIR, transform: (type: TypeIR) => TypeIR): TypeIR {
  // Children are mapped by direct calls: no per-node closure, since watch runs this on every tool.
  switch (type.kind) {
    case 'array':
      return transform({ ...type, items: mapType(type.items, transform) });
    case 'tuple':
      return transform({
        ...type,
        items: type.items.map((item) => mapType(item, transform)),
        ...(type.rest ? { rest: mapType(type.rest, transform) } : {}),
      });
    case 'object':
      return transform({
        ...type,
        properties: type.properties.map((property) => ({ ...property, type: mapType(property.type, transform) })),
      });
    case 'record':
      return transform({ ...type, values: mapType(type.values, transform) });
    case 'union':
      return transform({ ...type, members: type.members.map((member) => mapType(member, transform)) });
    default:
      return transform(type);
  }
}

/** Names of the named types a type refers to directly (not through other named types). */
export function referencedNames(type: TypeIR): string[] {
  if (type.kind === 'ref') return [type.name];
  return childTypes(type).flatMap(referencedNames);
}

/** Whether `predicate` holds for the type or any type inside it, following references through `resolve`. */
export function someType(
  type: TypeIR,
  predicate: (type: TypeIR) => boolean,
  resolve: (name: string) => TypeIR | undefined,
  seen: Set<string> = new Set(),
): boolean {
  if (predicate(type)) return true;
  if (type.kind === 'ref') {
    if (seen.has(type.name)) return false;
    seen.add(type.name);
    const target = resolve(type.name);
    return target !== undefined && someType(target, predicate, resolve, seen);
  }
  return childTypes(type).some((child) => someType(child, predicate, resolve, seen));
}

/**
 * Facts about finished IR, remembered per object. The IR `readProject` returns is never mutated,
 * and `--watch` hands the emitters the very same objects for unchanged tools and types, so a pass
 * over the whole manifest costs a lookup per tool instead of a walk. Not for IR still being built.
 */
export function remembered<K extends object, V>(memo: WeakMap<K, V>, key: K, compute: (key: K) => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute(key);
    memo.set(key, value);
  }
  return value;
}

const referencedNamesMemo = new WeakMap<TypeIR, readonly string[]>();

/** `referencedNames` of finished IR, remembered per object (see `remembered`). */
export function namesReferencedBy(type: TypeIR): readonly string[] {
  return remembered(referencedNamesMemo, type, referencedNames);
}
