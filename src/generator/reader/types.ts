/**
 * TypeScript types → `TypeIR`. Works on checker types (so imports, aliases and inferred types all
 * resolve) and uses type nodes only to point diagnostics at what the user wrote and to keep
 * string-literal unions in their written order.
 *
 * Anything that has no faithful JSON Schema is an error at the offending annotation: a silent
 * `any` in the schema would let the server accept input the method cannot handle.
 */
import path from 'node:path';
import { type Symbol as MorphSymbol, Node, SymbolFlags, type Type, TypeFlags } from 'ts-morph';
import { DiagnosticCode } from '../diagnostics.js';
import type { JsonValue, NamedTypeIR, ObjectTypeIR, PropertyIR, RefTypeIR, TypeIR } from '../ir.js';
import { hasJsDocTag, jsDocDescription, jsDocTags } from './jsdoc.js';
import { type DiagnosticSink, relativeModulePath, sourceReference } from './report.js';
import type { TaskgenTags } from './taskgen-tags.js';

/** Where a type is used: what to point at and how to name it in messages. */
export interface TypeSite {
  /** The type annotation, or the declaration's name when the type is inferred. */
  readonly node: Node;
  /** `parameter 'limit' of Reports.list`, `property 'zip' of 'Address'`, ... */
  readonly subject: string;
  /** `@integer` on the declaration: number leaves become integers. */
  readonly integer?: boolean;
}

/** A type with `undefined` split off, which the caller turns into optionality. */
export interface OptionalAwareType {
  readonly type: TypeIR | undefined;
  readonly includesUndefined: boolean;
}

interface NamedEntry {
  /** Unique while reading (`src/types.ts#Address`); replaced by a display name at the end. */
  readonly key: string;
  readonly baseName: string;
  state: 'reading' | 'done' | 'failed';
  definition?: NamedTypeIR;
}

const PLAIN_DATA_HINT =
  'Use a plain interface or type alias whose properties are strings, numbers, booleans, string-literal unions, arrays or nested objects.';

/** Standard-library types users reach for, with what to use instead. */
const LIBRARY_TYPE_HINTS: Readonly<Record<string, string>> = {
  Date: 'Pass an ISO-8601 string instead (Date support is planned).',
  Map: 'Use an array of { key, value } objects instead.',
  Set: 'Use an array instead.',
  WeakMap: 'Use an array of { key, value } objects instead.',
  WeakSet: 'Use an array instead.',
  Promise: 'Await the value before it reaches the schema.',
  RegExp: 'Pass the pattern as a string.',
};

export class TypeReader {
  private readonly named = new Map<MorphSymbol['compilerSymbol'], NamedEntry>();

  constructor(
    private readonly sink: DiagnosticSink,
    private readonly tags: TaskgenTags,
    private readonly rootDir: string,
  ) {}

  /** Reads a type where `undefined` means "may be absent" (properties, parameters). */
  readOptionalAware(type: Type, site: TypeSite): OptionalAwareType {
    if (!type.isUnion()) return { type: this.read(type, site), includesUndefined: type.isUndefined() };
    const members = type.getUnionTypes();
    const defined = members.filter((member) => !member.isUndefined());
    if (defined.length === members.length) return { type: this.read(type, site), includesUndefined: false };
    const only = defined[0];
    if (defined.length === 1 && only) return { type: this.read(only, site), includesUndefined: true };
    return { type: this.readUnion(defined, site, type), includesUndefined: true };
  }

  /** Reads a type that must be present. Returns `undefined` after reporting a diagnostic. */
  read(type: Type, site: TypeSite): TypeIR | undefined {
    if (this.tags.roleOfType(type) === 'integer') return { kind: 'integer' };
    if (type.getFlags() & (TypeFlags.Enum | TypeFlags.EnumLiteral)) {
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `enum '${type.getText(site.node)}' is not supported yet`,
        "Use a string-literal union such as `'draft' | 'final'`.",
      );
    }
    if (type.isUnion() && !type.isBoolean()) return this.readUnion(type.getUnionTypes(), site, type);
    const primitive = this.readPrimitive(type, site);
    if (primitive !== 'not-primitive') return primitive;
    if (type.isArray() || type.isReadonlyArray()) return this.readArray(type, site);
    if (type.isIntersection()) {
      return this.fail(
        DiagnosticCode.UnsupportedIntersection,
        site,
        `intersection type '${type.getText(site.node)}' is not supported yet`,
        'Declare one interface with all the properties (use `extends` to combine interfaces).',
      );
    }
    if (type.isTuple()) {
      return this.fail(
        DiagnosticCode.TupleType,
        site,
        `tuple type '${type.getText(site.node)}' is not supported yet`,
        'Use an object with named properties, or an array.',
      );
    }
    if (type.isObject()) return this.readObjectLike(type, site);
    return this.fail(
      DiagnosticCode.UnsupportedType,
      site,
      `type '${type.getText(site.node)}' cannot be expressed as JSON Schema`,
      PLAIN_DATA_HINT,
    );
  }

  /** The definition behind a `ref`, once it has been read successfully. */
  resolve(ref: RefTypeIR): NamedTypeIR | undefined {
    for (const entry of this.named.values()) if (entry.key === ref.name) return entry.definition;
    return undefined;
  }

  /** Every named type read without errors, keyed by its reading key. */
  definitions(): Map<string, { readonly baseName: string; readonly definition: NamedTypeIR }> {
    const result = new Map<string, { baseName: string; definition: NamedTypeIR }>();
    for (const entry of this.named.values()) {
      if (entry.state === 'done' && entry.definition)
        result.set(entry.key, { baseName: entry.baseName, definition: entry.definition });
    }
    return result;
  }

  private readPrimitive(type: Type, site: TypeSite): TypeIR | undefined | 'not-primitive' {
    const flags = type.getFlags();
    if (flags & TypeFlags.Any) {
      // The checker's error type is an `any` named "error": an unresolved import or a typo, not a choice.
      const isErrorType = (type.compilerType as { intrinsicName?: string }).intrinsicName === 'error';
      if (isErrorType) {
        return this.fail(
          DiagnosticCode.UnresolvedType,
          site,
          `type '${site.node.getText()}' could not be resolved`,
          'Fix the TypeScript errors in this file (is the import path right?), then run mcp-taskgen again.',
        );
      }
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'any' cannot be expressed as JSON Schema`,
        PLAIN_DATA_HINT,
      );
    }
    if (flags & TypeFlags.Unknown)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'unknown' cannot be expressed as JSON Schema`,
        PLAIN_DATA_HINT,
      );
    if (flags & TypeFlags.Never)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'never' cannot be expressed as JSON Schema`,
        PLAIN_DATA_HINT,
      );
    if (flags & TypeFlags.Null)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'null' is not supported yet`,
        'Make the property optional (`name?: T`) instead of nullable.',
      );
    if (flags & (TypeFlags.Undefined | TypeFlags.Void)) {
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'${type.getText()}' cannot be a value in JSON Schema`,
        'Make the property optional (`name?: T`) instead.',
      );
    }
    if (flags & TypeFlags.String) return { kind: 'string' };
    if (flags & TypeFlags.StringLiteral) return { kind: 'enum', values: [String(type.getLiteralValue())] };
    if (flags & TypeFlags.TemplateLiteral)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `template literal type '${type.getText()}' is not supported yet`,
        'Use `string`.',
      );
    if (flags & TypeFlags.Number) return { kind: site.integer ? 'integer' : 'number' };
    if (flags & TypeFlags.NumberLiteral)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `numeric literal type '${type.getText()}' is not supported yet`,
        'Use `number`, or a string-literal union.',
      );
    if (flags & TypeFlags.Boolean) return { kind: 'boolean' };
    if (flags & TypeFlags.BooleanLiteral)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `boolean literal type '${type.getText()}' is not supported yet`,
        'Use `boolean`.',
      );
    if (flags & (TypeFlags.BigInt | TypeFlags.BigIntLiteral))
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'bigint' has no JSON representation`,
        'Pass it as a decimal string, or use `number` when the range allows.',
      );
    if (flags & (TypeFlags.ESSymbol | TypeFlags.UniqueESSymbol))
      return this.fail(DiagnosticCode.UnsupportedType, site, `symbols have no JSON representation`, PLAIN_DATA_HINT);
    if (flags & TypeFlags.TypeParameter) {
      return this.fail(
        DiagnosticCode.GenericType,
        site,
        `type parameter '${type.getText()}' is not supported yet`,
        'Use a concrete type: the schema is generated once, not per call.',
      );
    }
    if (flags & TypeFlags.NonPrimitive)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'object' says nothing about the properties`,
        PLAIN_DATA_HINT,
      );
    return 'not-primitive';
  }

  private readUnion(members: readonly Type[], site: TypeSite, whole: Type): TypeIR | undefined {
    if (members.length > 0 && members.every((member) => member.isStringLiteral())) {
      const values = members.map((member) => String(member.getLiteralValue()));
      return { kind: 'enum', values: writtenOrder(values, site.node, whole) };
    }
    // `boolean | undefined` arrives here as `false | true` once `undefined` is split off.
    if (members.length === 2 && members.every((member) => member.isBooleanLiteral())) return { kind: 'boolean' };
    const text = Node.isUnionTypeNode(site.node)
      ? site.node.getText()
      : members.map((member) => member.getText(site.node)).join(' | ');
    const hasNull = members.some((member) => member.isNull());
    return this.fail(
      DiagnosticCode.UnsupportedUnion,
      site,
      `union type '${text}' is not supported yet: only unions of string literals are`,
      hasNull
        ? 'Make the property optional (`name?: T`) instead of nullable.'
        : "Use a string-literal union such as `'a' | 'b'`, or one object type with optional properties.",
    );
  }

  private readArray(type: Type, site: TypeSite): TypeIR | undefined {
    const element = type.getArrayElementType() ?? type.getTypeArguments()[0];
    if (!element)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `array type '${type.getText(site.node)}' has no element type`,
        PLAIN_DATA_HINT,
      );
    const items = this.read(element, { ...site, node: elementTypeNode(site.node) });
    return items && { kind: 'array', items, readonly: type.isReadonlyArray() };
  }

  private readObjectLike(type: Type, site: TypeSite): TypeIR | undefined {
    const text = type.getText(site.node);
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) {
      return this.fail(
        DiagnosticCode.FunctionType,
        site,
        `function type '${text}' cannot be expressed as JSON Schema`,
        'Functions cannot be sent over the wire; pass the data the function would compute.',
      );
    }
    // Before the library check: `Record<K, V>` is declared in the standard library too.
    if (type.getStringIndexType() || type.getNumberIndexType()) {
      return this.fail(
        DiagnosticCode.IndexSignature,
        site,
        `index signature in '${text}' is not supported yet`,
        'List the properties explicitly, or use an array of { key, value } objects.',
      );
    }
    const symbol = type.getSymbol();
    if (symbol && isStandardLibrary(symbol)) {
      const libraryName = symbol.getName();
      return this.fail(
        DiagnosticCode.NonPlainObject,
        site,
        `'${libraryName}' is not plain JSON data`,
        LIBRARY_TYPE_HINTS[libraryName] ?? PLAIN_DATA_HINT,
      );
    }
    if (type.isClass()) {
      return this.fail(
        DiagnosticCode.NonPlainObject,
        site,
        `class '${text}' is not plain JSON data: instances carry a prototype and methods`,
        'Declare an interface with the data properties and use it here.',
      );
    }
    if (type.getTypeArguments().length > 0 || type.getAliasTypeArguments().length > 0) {
      return this.fail(
        DiagnosticCode.GenericType,
        site,
        `generic type '${text}' is not supported yet`,
        'Declare a non-generic interface with the properties spelled out.',
      );
    }
    const namedSymbol = type.getAliasSymbol() ?? (symbol?.hasFlags(SymbolFlags.Interface) ? symbol : undefined);
    if (namedSymbol) return this.readNamed(type, namedSymbol, site);
    const properties = this.readProperties(type, site, 'the object type');
    return properties && { kind: 'object', properties };
  }

  private readNamed(type: Type, symbol: MorphSymbol, site: TypeSite): RefTypeIR | undefined {
    const declaration = symbol.getDeclarations()[0];
    const existing = this.named.get(symbol.compilerSymbol);
    if (existing?.state === 'done') return { kind: 'ref', name: existing.key };
    if (existing?.state === 'failed') return undefined;
    if (existing?.state === 'reading') {
      return this.fail(
        DiagnosticCode.RecursiveType,
        site,
        `'${symbol.getName()}' refers to itself; recursive types are not supported yet`,
        'Break the cycle, for example with an id that refers to the other object.',
      );
    }
    const file = declaration ? relativeModulePath(declaration.getSourceFile(), this.rootDir) : '?';
    const entry: NamedEntry = { key: `${file}#${symbol.getName()}`, baseName: symbol.getName(), state: 'reading' };
    this.named.set(symbol.compilerSymbol, entry);
    const properties = this.readProperties(type, site, `'${symbol.getName()}'`);
    if (!properties || !declaration) {
      entry.state = 'failed';
      return undefined;
    }
    const description = jsDocDescription(declaration);
    const nameNode = Node.hasName(declaration) ? declaration.getNameNode() : declaration;
    entry.definition = {
      name: entry.key,
      ...(description !== undefined ? { description } : {}),
      source: sourceReference(nameNode, this.rootDir),
      type: { kind: 'object', properties },
    };
    entry.state = 'done';
    return { kind: 'ref', name: entry.key };
  }

  /** Reads every property, reporting each bad one, and returns `undefined` if any failed. */
  private readProperties(type: Type, site: TypeSite, owner: string): PropertyIR[] | undefined {
    const properties: PropertyIR[] = [];
    let failed = false;
    for (const property of type.getProperties()) {
      const read = this.readProperty(property, site, owner);
      if (read) properties.push(read);
      else failed = true;
    }
    return failed ? undefined : properties;
  }

  private readProperty(property: MorphSymbol, ownerSite: TypeSite, owner: string): PropertyIR | undefined {
    const name = property.getName();
    const declaration = property.getValueDeclaration() ?? property.getDeclarations()[0];
    const subject = `property '${name}' of ${owner}`;
    const nameNode = declaration && Node.hasName(declaration) ? declaration.getNameNode() : declaration;
    if (property.getEscapedName().startsWith('__@')) {
      return this.fail(
        DiagnosticCode.UnsupportedType,
        { node: nameNode ?? ownerSite.node, subject },
        'symbol-keyed properties have no JSON representation',
        PLAIN_DATA_HINT,
      );
    }
    if (property.hasFlags(SymbolFlags.Method) && declaration) {
      return this.fail(
        DiagnosticCode.FunctionType,
        { node: declaration, subject },
        `'${name}' is a method; functions cannot be expressed as JSON Schema`,
        'Keep only data properties in types used as input or output.',
      );
    }
    const typeNode =
      declaration && (Node.isPropertySignature(declaration) || Node.isPropertyDeclaration(declaration))
        ? declaration.getTypeNode()
        : undefined;
    const site: TypeSite = {
      node: typeNode ?? nameNode ?? ownerSite.node,
      subject,
      integer: declaration ? hasJsDocTag(declaration, 'integer') : false,
    };
    const propertyType = property.getTypeAtLocation(declaration ?? ownerSite.node);
    const { type, includesUndefined } = this.readOptionalAware(propertyType, site);
    if (!type || !declaration) return undefined;
    if (site.integer && !containsInteger(type)) {
      return this.fail(
        DiagnosticCode.InvalidJsDocTag,
        site,
        `@integer applies to 'number' (or arrays of it), not to '${site.node.getText()}'`,
        'Remove the tag, or change the type to number.',
      );
    }
    const optional = property.isOptional() || includesUndefined;
    const description = jsDocDescription(declaration);
    const defaultValue = this.readDefault(declaration, type, optional, subject);
    if (defaultValue === 'invalid') return undefined;
    return {
      name,
      type,
      optional,
      ...(description !== undefined ? { description } : {}),
      ...(defaultValue !== undefined ? { default: defaultValue.value } : {}),
    };
  }

  private readDefault(
    declaration: Node,
    type: TypeIR,
    optional: boolean,
    subject: string,
  ): { value: JsonValue } | undefined | 'invalid' {
    const tag = jsDocTags(declaration).find((candidate) => candidate.name === 'default');
    if (!tag) return undefined;
    const report = (message: string, hint: string): 'invalid' => {
      this.sink.error(DiagnosticCode.InvalidJsDocTag, tag.range, `${subject}: ${message}`, hint);
      return 'invalid';
    };
    let value: JsonValue;
    try {
      value = JSON.parse(tag.text ?? '') as JsonValue;
    } catch {
      return report(
        `@default must be a JSON value, got '${tag.text ?? ''}'`,
        'Write strings with double quotes: @default "fast".',
      );
    }
    if (!optional)
      return report(
        '@default on a required property has no effect',
        'Make the property optional (`name?: T`) so that callers may leave it out.',
      );
    if (!this.valueMatches(value, type))
      return report(
        `@default ${JSON.stringify(value)} does not match the property's type`,
        'Change the default, or the type.',
      );
    return { value };
  }

  /** Whether a default value fits the type; types still being read are accepted as any object. */
  private valueMatches(value: JsonValue, type: TypeIR): boolean {
    switch (type.kind) {
      case 'string':
        return typeof value === 'string';
      case 'number':
        return typeof value === 'number';
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value);
      case 'boolean':
        return typeof value === 'boolean';
      case 'enum':
        return typeof value === 'string' && type.values.includes(value);
      case 'array':
        return Array.isArray(value) && value.every((item) => this.valueMatches(item, type.items));
      case 'object':
        return this.objectMatches(value, type);
      case 'ref': {
        const definition = this.resolve(type);
        return definition ? this.objectMatches(value, definition.type) : isPlainObject(value);
      }
    }
  }

  private objectMatches(value: JsonValue, type: ObjectTypeIR): boolean {
    if (!isPlainObject(value)) return false;
    const known = new Map(type.properties.map((property) => [property.name, property]));
    if (Object.keys(value).some((key) => !known.has(key))) return false;
    return type.properties.every((property) => {
      const item = value[property.name];
      return item === undefined ? property.optional : this.valueMatches(item, property.type);
    });
  }

  private fail(code: DiagnosticCode, site: TypeSite, message: string, hint: string): undefined {
    this.sink.error(code, site.node, `${site.subject}: ${message}`, hint);
    return undefined;
  }
}

function isPlainObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function containsInteger(type: TypeIR): boolean {
  return type.kind === 'integer' || (type.kind === 'array' && containsInteger(type.items));
}

/** Declared in TypeScript's bundled `lib.*.d.ts`, i.e. a built-in such as Map or Date. */
function isStandardLibrary(symbol: MorphSymbol): boolean {
  const declarations = symbol.getDeclarations();
  return (
    declarations.length > 0 &&
    declarations.every((declaration) => {
      const filePath = declaration.getSourceFile().getFilePath();
      return /^lib\..*\.d\.ts$/.test(path.posix.basename(filePath)) && filePath.includes('/typescript/lib/');
    })
  );
}

/** Narrows a diagnostic site from `Foo[]` / `Array<Foo>` / `readonly Foo[]` to `Foo`. */
function elementTypeNode(node: Node): Node {
  if (Node.isTypeOperatorTypeNode(node)) return elementTypeNode(node.getTypeNode());
  if (Node.isArrayTypeNode(node)) return node.getElementTypeNode();
  if (Node.isTypeReference(node)) return node.getTypeArguments()[0] ?? node;
  return node;
}

/**
 * Enum values in the order the user wrote them (`'low' | 'medium' | 'high'`), found through the
 * union's annotation or its type alias. Falls back to sorted order, which is stable but not pretty.
 */
function writtenOrder(values: readonly string[], siteNode: Node, whole: Type): string[] {
  const written: string[] = [];
  const visit = (node: Node | undefined, depth: number): void => {
    if (!node || depth > 8) return;
    if (Node.isParenthesizedTypeNode(node)) {
      visit(node.getTypeNode(), depth + 1);
      return;
    }
    if (Node.isUnionTypeNode(node)) {
      for (const member of node.getTypeNodes()) visit(member, depth + 1);
      return;
    }
    if (Node.isLiteralTypeNode(node)) {
      const literal = node.getLiteral();
      if (Node.isStringLiteral(literal) || Node.isNoSubstitutionTemplateLiteral(literal))
        written.push(literal.getLiteralValue());
      return;
    }
    if (Node.isTypeReference(node)) {
      for (const declaration of node.getTypeName().getSymbol()?.getAliasedSymbol()?.getDeclarations() ??
        node.getTypeName().getSymbol()?.getDeclarations() ??
        []) {
        if (Node.isTypeAliasDeclaration(declaration)) visit(declaration.getTypeNode(), depth + 1);
      }
    }
  };
  visit(siteNode, 0);
  if (written.length === 0) {
    for (const declaration of whole.getAliasSymbol()?.getDeclarations() ?? []) {
      if (Node.isTypeAliasDeclaration(declaration)) visit(declaration.getTypeNode(), 0);
    }
  }
  const unique = [...new Set(written)];
  const sameSet = unique.length === values.length && values.every((value) => unique.includes(value));
  return sameSet ? unique : [...values].sort();
}
