/**
 * TypeScript types → `TypeIR`. Works on checker types (so imports, aliases, generic
 * instantiations, utility types and inferred types all resolve) and uses type nodes only to point
 * diagnostics at what the user wrote and to keep string-literal unions in their written order.
 *
 * Anything that has no faithful JSON Schema is an error at the offending annotation: a silent
 * `any` in the schema would let the server accept input the method cannot handle. The one
 * deliberate exception is `unknown`, which becomes `{}` with a warning: the method's own type
 * already says "validate this yourself".
 */
import path from 'node:path';
import {
  type EnumDeclaration,
  type Symbol as MorphSymbol,
  Node,
  SymbolFlags,
  type Type,
  TypeFlags,
  TypeFormatFlags,
  ts,
} from 'ts-morph';
import { DiagnosticCode } from '../diagnostics.js';
import type {
  BrandTypeIR,
  JsonValue,
  NamedTypeIR,
  ObjectTypeIR,
  PropertyIR,
  RefTypeIR,
  TemplatePartIR,
  TemplateTypeIR,
  TypeIR,
  UnionTypeIR,
} from '../ir.js';
import { applyConstraints, readAnnotations, reportUnknownTags } from './annotations.js';
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
  'Use a plain interface or type alias whose properties are strings, numbers, booleans, literal unions, arrays or nested objects.';

/** Standard-library types users reach for, with what to use instead. */
const LIBRARY_TYPE_HINTS: Readonly<Record<string, string>> = {
  Map: 'Use Record<string, V>, or an array of { key, value } objects.',
  Set: 'Use an array instead.',
  WeakMap: 'Use Record<string, V>, or an array of { key, value } objects.',
  WeakSet: 'Use an array instead.',
  Promise: 'Await the value before it reaches the schema.',
  RegExp: 'Pass the pattern as a string.',
};

/** zod's regular expressions for template placeholders (`z.templateLiteral`), so both sides agree. */
const TEMPLATE_PLACEHOLDER_PATTERNS = { string: '[\\s\\S]{0,}', number: '-?\\d+(?:\\.\\d+)?' } as const;

export class TypeReader {
  /** Keyed by symbol for plain named types, by checker type for generic instantiations. */
  private readonly named = new Map<object, NamedEntry>();
  private readonly usedKeys = new Set<string>();
  /**
   * Anonymous types being read since the innermost named type, to catch recursion that has no
   * named object to hang a `$ref` on. A named type starts a fresh stack: a cycle through it ends
   * at its `$ref` (`type Filter = Match | AllOf` with `AllOf.all: Filter[]` is fine).
   */
  private inlineStack = new Set<ts.Type>();
  /** Reads that failed on a named type whose errors were reported before (see `readNamed`). */
  failedReads = 0;

  constructor(
    private readonly sink: DiagnosticSink,
    private readonly tags: TaskgenTags,
    private readonly checker: ts.TypeChecker,
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
    if (type.isUnion() && !type.isBoolean())
      return this.guardRecursion(type, site, () => this.readUnion(type.getUnionTypes(), site, type));
    if (type.getFlags() & TypeFlags.EnumLiteral) return this.readUnion([type], site, type);
    const primitive = this.readPrimitive(type, site);
    if (primitive !== 'not-primitive') return primitive;
    if (isStandardLibraryType(type, 'Date')) return { kind: 'date-time' };
    if (type.isArray() || type.isReadonlyArray())
      return this.guardRecursion(type, site, () => this.readArray(type, site));
    if (type.isTuple()) return this.guardRecursion(type, site, () => this.readTuple(type, site));
    if (type.isIntersection()) return this.readIntersection(type, site);
    if (type.isObject()) return this.guardInline(type, site, () => this.readObjectLike(type, site));
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
          "Fix the TypeScript errors in this file (is the import path right?), then run mcp-taskgen again. Global types from the tsconfig's `types` (such as @types/node) are not loaded: import what a signature uses.",
        );
      }
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'any' cannot be expressed as JSON Schema: it would switch validation off without saying so`,
        'Use a precise type, or `unknown` to accept any JSON value explicitly (and validate it in the method).',
      );
    }
    if (flags & TypeFlags.Unknown) {
      this.sink.warning(
        DiagnosticCode.UnknownAcceptsAnything,
        site.node,
        `${site.subject}: 'unknown' accepts any JSON value; the schema is {} and nothing is validated`,
        'Use a precise type if you can; otherwise validate the value inside the method.',
      );
      return { kind: 'unknown' };
    }
    if (flags & TypeFlags.Never)
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'never' cannot be expressed as JSON Schema`,
        PLAIN_DATA_HINT,
      );
    if (flags & TypeFlags.Null) return { kind: 'null' };
    if (flags & (TypeFlags.Undefined | TypeFlags.Void)) {
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'${type.getText()}' cannot be a value in JSON Schema`,
        'Make the property optional (`name?: T`) instead, or use `null`.',
      );
    }
    if (flags & TypeFlags.String) return { kind: 'string' };
    if (flags & TypeFlags.StringLiteral) return { kind: 'enum', values: [String(type.getLiteralValue())] };
    if (flags & TypeFlags.TemplateLiteral) return this.readTemplate(type, site);
    if (flags & TypeFlags.Number) return { kind: site.integer ? 'integer' : 'number' };
    if (flags & TypeFlags.NumberLiteral) return { kind: 'literal', values: [Number(type.getLiteralValue())] };
    if (flags & TypeFlags.Boolean) return { kind: 'boolean' };
    if (flags & TypeFlags.BooleanLiteral) return { kind: 'literal', values: [type.getText() === 'true'] };
    if (flags & (TypeFlags.BigInt | TypeFlags.BigIntLiteral))
      return this.fail(
        DiagnosticCode.UnsupportedType,
        site,
        `'bigint' has no JSON representation`,
        'Pass it as a decimal string (`string` with @pattern ^-?\\d+$) and convert with BigInt() in the method.',
      );
    if (flags & (TypeFlags.ESSymbol | TypeFlags.UniqueESSymbol))
      return this.fail(DiagnosticCode.UnsupportedType, site, `symbols have no JSON representation`, PLAIN_DATA_HINT);
    if (flags & TypeFlags.TypeParameter) {
      return this.fail(
        DiagnosticCode.GenericType,
        site,
        `type parameter '${type.getText()}' is not supported`,
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

  /**
   * Unions, after the checker has flattened them: literal sets become `enum`/`literal`, a whole
   * TS enum becomes `native-enum`, `true | false` becomes `boolean`, `null` goes last, and the rest
   * is read member by member (with a discriminator when the members allow one).
   */
  private readUnion(members: readonly Type[], site: TypeSite, whole: Type): TypeIR | undefined {
    const hasNull = members.some((member) => member.isNull());
    const rest = members.filter((member) => !member.isNull());
    const parts: TypeIR[] = [];
    const enumMembers = rest.filter((member) => member.getFlags() & TypeFlags.EnumLiteral);
    const others = rest.filter((member) => !(member.getFlags() & TypeFlags.EnumLiteral));
    if (enumMembers.length > 0) {
      const nativeEnums = this.readNativeEnums(enumMembers, site);
      if (!nativeEnums) return undefined;
      parts.push(...nativeEnums);
    }
    const booleans = others.filter((member) => member.isBooleanLiteral());
    const literals = others.filter((member) => member.isStringLiteral() || member.isNumberLiteral());
    const complex = others.filter((member) => !member.isBooleanLiteral() && !(literals as Type[]).includes(member));
    if (literals.length > 0 && literals.every((member) => member.isStringLiteral()) && booleans.length !== 1) {
      const values = literals.map((member) => String(member.getLiteralValue()));
      parts.push({ kind: 'enum', values: writtenOrder(values, site.node, whole) });
    } else if (literals.length > 0 || booleans.length === 1) {
      // The checker lists literals in the order it created them, which other code can change: sort.
      const values = [
        ...literals.map((member) => member.getLiteralValue() as string | number),
        ...booleans.map((member) => member.getText() === 'true'),
      ].sort(compareLiterals);
      parts.push({ kind: 'literal', values });
    }
    // `boolean` arrives as `false | true`; one of them alone was kept as a literal above.
    if (booleans.length === 2) parts.push({ kind: 'boolean' });
    let failed = false;
    for (const member of complex) {
      const read = this.read(member, site);
      if (read) parts.push(read);
      else failed = true;
    }
    if (failed) return undefined;
    if (hasNull) parts.push({ kind: 'null' });
    const only = parts[0];
    if (parts.length === 1 && only) return only;
    const union: UnionTypeIR = { kind: 'union', members: parts };
    const discriminator = hasNull ? undefined : this.discriminatorOf(parts);
    return discriminator ? { ...union, discriminator } : union;
  }

  /**
   * Enum-member literals, grouped by their enum: the whole enum (`Color`), or some of its members
   * (`kind: Kind.Circle`, `Color.Red | Color.Blue`). Members of several enums become one part each.
   */
  private readNativeEnums(members: readonly Type[], site: TypeSite): TypeIR[] | undefined {
    const byEnum = new Map<EnumDeclaration, Type[]>();
    for (const member of members) {
      const declaration = member.getSymbol()?.getDeclarations()[0]?.getParent();
      if (!Node.isEnumDeclaration(declaration)) {
        return this.fail(
          DiagnosticCode.UnsupportedType,
          site,
          `'${member.getText(site.node)}' is an enum member whose enum cannot be found`,
          'Use a string-literal union instead.',
        );
      }
      byEnum.set(declaration, [...(byEnum.get(declaration) ?? []), member]);
    }
    const parts: TypeIR[] = [];
    for (const [declaration, used] of byEnum) {
      const enumName = declaration.getName();
      if (declaration.isConstEnum() || !declaration.isExported() || declaration.getSourceFile().isDeclarationFile()) {
        return this.fail(
          DiagnosticCode.EnumNotImportable,
          site,
          `enum '${enumName}' must be a non-const enum exported from a source file of the project`,
          `The generated module validates with z.enum(${enumName}) or z.literal(${enumName}.Member) and so imports the enum object: export it, and drop \`const\`.`,
        );
      }
      const usedNames = new Set(used.map((member) => member.getSymbol()?.getName()));
      const declared = declaration.getMembers();
      const admitted = declared.filter((member) => usedNames.has(member.getName()));
      parts.push({
        kind: 'native-enum',
        module: relativeModulePath(declaration.getSourceFile(), this.rootDir),
        exportName: enumName,
        members: admitted.map((member) => ({ name: member.getName(), value: member.getValue() as string | number })),
        whole: admitted.length === declared.length,
      });
    }
    return parts;
  }

  /**
   * The first property that every member has, required, with one literal value per member, all
   * distinct. Members that are still being read (recursion) cannot be inspected, so none then.
   */
  private discriminatorOf(members: readonly TypeIR[]): string | undefined {
    const objects: ObjectTypeIR[] = [];
    for (const member of members) {
      const object = member.kind === 'ref' ? this.resolve(member)?.type : member.kind === 'object' ? member : undefined;
      if (!object) return undefined;
      objects.push(object);
    }
    // OpenAPI's `discriminator` (and ajv's) takes string tags only; other tags stay a plain `anyOf`.
    const singleValue = (type: TypeIR): string | undefined => {
      if (type.kind === 'enum' && type.values.length === 1) return type.values[0];
      const [member, ...more] = type.kind === 'native-enum' ? type.members : [];
      return member && more.length === 0 && typeof member.value === 'string' ? member.value : undefined;
    };
    for (const candidate of objects[0]?.properties ?? []) {
      const values = objects.map((object) => {
        const property = object.properties.find((other) => other.name === candidate.name);
        return property && !property.optional ? singleValue(property.type) : undefined;
      });
      if (values.every((value) => value !== undefined) && new Set(values).size === values.length) return candidate.name;
    }
    return undefined;
  }

  private readTemplate(type: Type, site: TypeSite): TemplateTypeIR | undefined {
    const template = type.compilerType as ts.TemplateLiteralType;
    const parts: TemplatePartIR[] = [];
    const pushText = (text: string) => {
      if (text !== '') parts.push({ kind: 'text', text });
    };
    pushText(template.texts[0] ?? '');
    for (const [index, placeholder] of template.types.entries()) {
      if (placeholder.flags & ts.TypeFlags.String) parts.push({ kind: 'string' });
      else if (placeholder.flags & ts.TypeFlags.Number) parts.push({ kind: 'number' });
      else
        return this.fail(
          DiagnosticCode.UnsupportedType,
          site,
          `template literal type '${type.getText(site.node)}' has a placeholder that JSON Schema cannot match`,
          `Use \${string} or \${number} placeholders, or plain \`string\` with @pattern.`,
        );
      pushText(template.texts[index + 1] ?? '');
    }
    const pattern = parts
      .map((part) => (part.kind === 'text' ? escapeRegExp(part.text) : TEMPLATE_PLACEHOLDER_PATTERNS[part.kind]))
      .join('');
    return { kind: 'template', parts, pattern: `^${pattern}$` };
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

  private readTuple(type: Type, site: TypeSite): TypeIR | undefined {
    const target = (type.compilerType as ts.TupleTypeReference).target;
    const flags = target.elementFlags;
    const elements = type.getTupleElements();
    if (flags.some((flag) => flag & (ts.ElementFlags.Optional | ts.ElementFlags.Variadic))) {
      return this.fail(
        DiagnosticCode.TupleType,
        site,
        `tuple type '${type.getText(site.node)}' has optional or variadic elements`,
        'Use required elements, optionally followed by one rest element (`[string, ...number[]]`).',
      );
    }
    const items: TypeIR[] = [];
    let rest: TypeIR | undefined;
    let failed = false;
    for (const [index, element] of elements.entries()) {
      const read = this.read(element, site);
      if (!read) failed = true;
      else if ((flags[index] ?? 0) & ts.ElementFlags.Rest) rest = read;
      else items.push(read);
    }
    if (failed) return undefined;
    return { kind: 'tuple', items, ...(rest ? { rest } : {}), readonly: target.readonly };
  }

  /** A branded primitive, or objects merged into one; anything else has no JSON Schema. */
  private readIntersection(type: Type, site: TypeSite): TypeIR | undefined {
    const members = type.getIntersectionTypes();
    const primitives = members.filter((member) => member.isString() || member.isNumber() || member.isBoolean());
    if (primitives.length === 1 && members.length > 1) return this.readBrand(type, members, site);
    if (members.every((member) => member.isObject() && !member.isArray() && !member.isTuple())) {
      return this.guardInline(type, site, () => this.readObjectLike(type, site));
    }
    return this.fail(
      DiagnosticCode.UnsupportedIntersection,
      site,
      `intersection type '${type.getText(site.node)}' cannot be expressed as JSON Schema`,
      'Intersect object types only (they merge into one object), or brand a primitive: `string & { __brand: "Id" }`.',
    );
  }

  private readBrand(type: Type, members: readonly Type[], site: TypeSite): BrandTypeIR | undefined {
    const text = () => type.getText(site.node);
    const brand: BrandTypeIR['brand'][number][] = [];
    let base: BrandTypeIR['base'] | undefined;
    for (const member of members) {
      if (member.isString()) base = { kind: 'string' };
      else if (member.isNumber()) base = { kind: site.integer ? 'integer' : 'number' };
      else if (member.isBoolean()) base = { kind: 'boolean' };
      else if (!member.isObject() || member.getCallSignatures().length > 0) {
        return this.fail(
          DiagnosticCode.UnsupportedIntersection,
          site,
          `intersection type '${text()}' is neither a branded primitive nor an object`,
          'Brand a primitive with an object of literal-typed properties: `string & { __brand: "UserId" }`.',
        );
      } else {
        for (const property of member.getProperties()) {
          const propertyType = property.getTypeAtLocation(site.node);
          const literal = propertyType.isLiteral() || propertyType.isBooleanLiteral();
          if (property.getEscapedName().startsWith('__@') || !literal) {
            return this.fail(
              DiagnosticCode.UnsupportedIntersection,
              site,
              `brand '${text()}' has property '${property.getName()}' that cannot be written in the generated module`,
              'Brand with string-named, literal-typed properties (`{ __brand: "UserId" }`), not symbols.',
            );
          }
          const value = propertyType.isBooleanLiteral()
            ? propertyType.getText() === 'true'
            : (propertyType.getLiteralValue() as string | number);
          brand.push({ name: property.getName(), value, optional: property.isOptional() });
        }
      }
    }
    return base && { kind: 'brand', base, brand };
  }

  private readObjectLike(type: Type, site: TypeSite): TypeIR | undefined {
    // Printing a type is one of the checker's slower operations: only for messages, only on failure.
    const text = () => type.getText(site.node);
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) {
      return this.fail(
        DiagnosticCode.FunctionType,
        site,
        `function type '${text()}' cannot be expressed as JSON Schema`,
        'Functions cannot be sent over the wire; pass the data the function would compute.',
      );
    }
    // Before the library check: `Record<K, V>` is declared in the standard library too.
    const indexInfos = this.checker.getIndexInfosOfType(type.compilerType);
    if (indexInfos.length > 0) return this.readRecord(type, indexInfos, site);
    const symbol = type.getSymbol();
    const aliasSymbol = type.getAliasSymbol();
    const isGeneric = type.getTypeArguments().length > 0 || type.getAliasTypeArguments().length > 0;
    // `Partial<T>`, `Pick<T, K>` & co. are standard-library aliases: read their resolved properties inline.
    if (aliasSymbol && isStandardLibrary(aliasSymbol) && isGeneric) return this.readInlineObject(type, site);
    // A named library type (`Map`, `Set`), not the anonymous type a library alias such as
    // `Record<'a' | 'b', V>` resolves to under a user's own alias (`type Prices = Record<...>`).
    if (symbol && isStandardLibrary(symbol) && !symbol.getName().startsWith('__')) {
      const libraryName = symbol.getName();
      return this.fail(
        DiagnosticCode.NonPlainObject,
        site,
        `'${libraryName}' is not plain JSON data`,
        LIBRARY_TYPE_HINTS[libraryName] ?? PLAIN_DATA_HINT,
      );
    }
    if (type.isClass() || symbol?.hasFlags(SymbolFlags.Class)) {
      return this.fail(
        DiagnosticCode.NonPlainObject,
        site,
        `class '${text()}' is not plain JSON data: instances carry a prototype and methods`,
        'Declare an interface with the data properties and use it here.',
      );
    }
    const namedSymbol = aliasSymbol ?? (symbol?.hasFlags(SymbolFlags.Interface) ? symbol : undefined);
    if (namedSymbol) return this.readNamed(type, namedSymbol, isGeneric, site);
    return this.readInlineObject(type, site);
  }

  private readInlineObject(type: Type, site: TypeSite): ObjectTypeIR | undefined {
    const properties = this.readProperties(type, site, 'the object type');
    return properties && { kind: 'object', properties };
  }

  private readRecord(type: Type, indexInfos: readonly ts.IndexInfo[], site: TypeSite): TypeIR | undefined {
    const text = () => type.getText(site.node);
    const [info, ...more] = indexInfos;
    if (!info || more.length > 0 || type.getProperties().length > 0) {
      return this.fail(
        DiagnosticCode.IndexSignature,
        site,
        `'${text()}' mixes an index signature with named properties (or several index signatures)`,
        'Use either named properties or one `Record<string, V>`; nest one inside the other if you need both.',
      );
    }
    const keyType = info.keyType;
    const key: TypeIR | undefined =
      keyType.flags & ts.TypeFlags.String
        ? { kind: 'string' }
        : keyType.flags & ts.TypeFlags.TemplateLiteral
          ? this.readTemplate(this.wrap(type, keyType), site)
          : undefined;
    if (!key || (key.kind !== 'string' && key.kind !== 'template')) {
      return this.fail(
        DiagnosticCode.IndexSignature,
        site,
        `index signature in '${text()}' has keys that JSON object keys cannot express`,
        `Use string keys: Record<string, V>, or a template such as Record<\`x-\${string}\`, V>.`,
      );
    }
    const values = this.read(this.wrap(type, info.type), site);
    return values && { kind: 'record', key, values };
  }

  /**
   * A ts-morph `Type` for a raw checker type (an index signature's key or value). ts-morph has no
   * public way to wrap one, so this borrows the factory of a type it already wrapped; it is the
   * one use of ts-morph internals in the reader.
   */
  private wrap(sibling: Type, compilerType: ts.Type): Type {
    const context = (sibling as unknown as { _context: { compilerFactory: { getType(type: ts.Type): Type } } })
      ._context;
    return context.compilerFactory.getType(compilerType);
  }

  private readNamed(type: Type, symbol: MorphSymbol, isGeneric: boolean, site: TypeSite): RefTypeIR | undefined {
    const identity: object = isGeneric ? type.compilerType : symbol.compilerSymbol;
    const existing = this.named.get(identity);
    // A type that refers to itself gets its `$ref` while it is still being read: that is the recursion.
    if (existing?.state === 'done' || existing?.state === 'reading') return { kind: 'ref', name: existing.key };
    if (existing?.state === 'failed') {
      // Its errors were reported when it was first read.
      this.failedReads++;
      return undefined;
    }
    const declaration = symbol.getDeclarations()[0];
    const file = declaration ? relativeModulePath(declaration.getSourceFile(), this.rootDir) : '?';
    const baseName = isGeneric ? instantiationName(symbol.getName(), type) : symbol.getName();
    // The key must not depend on reading order (`--watch` re-reads single files and merges):
    // a generic instantiation is keyed by its fully qualified text, which tells `Page<A>` from
    // another file's `Page<A>`.
    const qualified = isGeneric ? type.getText(undefined, TypeFormatFlags.UseFullyQualifiedType) : baseName;
    let key = `${file}#${qualified}`;
    for (let suffix = 2; this.usedKeys.has(key); suffix++) key = `${file}#${baseName}~${suffix}`;
    this.usedKeys.add(key);
    const entry: NamedEntry = { key, baseName, state: 'reading' };
    this.named.set(identity, entry);
    const outerStack = this.inlineStack;
    this.inlineStack = new Set();
    let properties: PropertyIR[] | undefined;
    try {
      properties = this.readProperties(type, site, `'${isGeneric ? type.getText(site.node) : symbol.getName()}'`);
    } finally {
      this.inlineStack = outerStack;
    }
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

  /** Objects: only anonymous ones can recurse without a name; named ones become a `$ref` instead. */
  private guardInline(type: Type, site: TypeSite, read: () => TypeIR | undefined): TypeIR | undefined {
    const named = type.getAliasSymbol() ?? type.getSymbol();
    const isAnonymous = !named || named.getName().startsWith('__');
    return isAnonymous ? this.guardRecursion(type, site, read) : read();
  }

  /**
   * Runs `read` for a type that is inlined into its parent (unions, arrays, tuples, anonymous
   * objects), reporting recursion that does not pass through a named object: it has no `$ref` to
   * stop at, so it would never end (`type Json = string | Json[]`).
   */
  private guardRecursion(type: Type, site: TypeSite, read: () => TypeIR | undefined): TypeIR | undefined {
    const key = type.compilerType;
    if (this.inlineStack.has(key)) {
      return this.fail(
        DiagnosticCode.RecursiveType,
        site,
        `'${type.getText(site.node)}' refers to itself without passing through a named object type`,
        'Put the recursion inside an interface (interface Node { children: Node[] }), which becomes a $ref.',
      );
    }
    this.inlineStack.add(key);
    try {
      return read();
    } finally {
      this.inlineStack.delete(key);
    }
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
    // Mapped types (`Partial<T>`, `Pick<T, K>`) have properties whose declaration is the original
    // property: its type there is the unmapped one, so ask for the type as seen from the owner.
    const propertyType = property.getTypeAtLocation(ownerSite.node);
    const { type: read, includesUndefined } = this.readOptionalAware(propertyType, site);
    if (!read) return undefined;
    // Mapped types with literal keys (`Record<'us' | 'eu', V>`, `{ [K in Mode]: V }`) create
    // properties without a declaration: the type is all there is, and no JSDoc can be attached.
    const keyRequired = !property.isOptional() && includesUndefined;
    const presence = { optional: property.isOptional() || includesUndefined, ...(keyRequired ? { keyRequired } : {}) };
    if (!declaration) return { name, type: read, ...presence };
    if (site.integer && !containsInteger(read)) {
      return this.fail(
        DiagnosticCode.InvalidJsDocTag,
        site,
        `@integer applies to 'number' (or arrays of it), not to '${site.node.getText()}'`,
        'Remove the tag, or change the type to number.',
      );
    }
    this.reportSameLineJsDoc(declaration, name);
    const tags = jsDocTags(declaration);
    reportUnknownTags(tags, subject, this.sink);
    const type = applyConstraints(read, tags, subject, this.sink);
    const annotations = readAnnotations(tags, subject, this.sink);
    if (!type || !annotations) return undefined;
    const { optional } = presence;
    const description = jsDocDescription(declaration);
    const defaultValue = this.readDefault(declaration, type, optional, subject);
    if (defaultValue === 'invalid') return undefined;
    return {
      name,
      type,
      ...presence,
      ...(description !== undefined ? { description } : {}),
      ...(defaultValue !== undefined ? { default: defaultValue.value } : {}),
      ...annotations,
    };
  }

  /**
   * `a: number; /** @maximum 5 *\/` followed by `b` on the next line: TypeScript reads a JSDoc
   * block only when it starts a line of its own before the member, so this one documents neither
   * `a` nor `b`, and its constraints would be lost without a word.
   */
  private reportSameLineJsDoc(declaration: Node, name: string): void {
    const sourceFile = declaration.getSourceFile();
    const text = sourceFile.getFullText();
    for (const comment of ts.getTrailingCommentRanges(text, declaration.getEnd()) ?? []) {
      if (!text.startsWith('/**', comment.pos) || text.startsWith('/**/', comment.pos)) continue;
      this.sink.warning(
        DiagnosticCode.MisplacedJsDoc,
        { sourceFile, start: comment.pos, end: comment.end },
        `this JSDoc block sits on the line of property '${name}', after it, so TypeScript attaches it to no property and mcp-taskgen ignores it`,
        'Move the comment onto its own line, directly above the property it documents.',
      );
    }
  }

  /** `@default` on a property: JSON, on an optional property, matching the type. */
  readDefault(
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
    // `Required<T>` makes an optional declaration required: its default no longer applies.
    const declaredOptional =
      (Node.isPropertySignature(declaration) || Node.isPropertyDeclaration(declaration)) &&
      declaration.hasQuestionToken();
    if (!optional && declaredOptional) return undefined;
    if (!optional)
      return report(
        '@default on a required property has no effect',
        'Make the property optional (`name?: T`) so that callers may leave it out.',
      );
    if (this.containsDate(type))
      return report(
        '@default is not supported on Date values',
        'Leave the property optional and apply the default in the method.',
      );
    if (!this.valueMatches(value, type))
      return report(
        `@default ${JSON.stringify(value)} does not match the property's type`,
        'Change the default, or the type.',
      );
    return { value };
  }

  private containsDate(type: TypeIR): boolean {
    if (type.kind === 'date-time') return true;
    if (type.kind === 'ref') return false;
    if (type.kind === 'array') return this.containsDate(type.items);
    if (type.kind === 'union') return type.members.some((member) => this.containsDate(member));
    if (type.kind === 'object') return type.properties.some((property) => this.containsDate(property.type));
    return false;
  }

  /**
   * Whether a default value fits the type, structurally; validation keywords (bounds, formats)
   * are left to the schema, which checks the default again when it is applied. Types still
   * being read are accepted as any object.
   */
  private valueMatches(value: JsonValue, type: TypeIR): boolean {
    switch (type.kind) {
      case 'string':
      case 'template':
        return typeof value === 'string' && (type.kind === 'string' || new RegExp(type.pattern).test(value));
      case 'number':
        return typeof value === 'number';
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value);
      case 'boolean':
        return typeof value === 'boolean';
      case 'null':
        return value === null;
      case 'enum':
        return typeof value === 'string' && type.values.includes(value);
      case 'literal':
        return (
          (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') &&
          (type.values as readonly unknown[]).includes(value)
        );
      case 'native-enum':
        return type.members.some((member) => member.value === value);
      case 'date-time':
        return false;
      case 'unknown':
        return true;
      case 'brand':
        return this.valueMatches(value, type.base);
      case 'array':
        return Array.isArray(value) && value.every((item) => this.valueMatches(item, type.items));
      case 'tuple':
        return (
          Array.isArray(value) &&
          value.length >= type.items.length &&
          (type.rest !== undefined || value.length === type.items.length) &&
          value.every((item, index) => {
            const itemType = type.items[index] ?? type.rest;
            return itemType !== undefined && this.valueMatches(item, itemType);
          })
        );
      case 'record':
        return isPlainObject(value) && Object.values(value).every((item) => this.valueMatches(item, type.values));
      case 'union':
        return type.members.some((member) => this.valueMatches(value, member));
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
  if (type.kind === 'integer') return true;
  if (type.kind === 'brand') return type.base.kind === 'integer';
  if (type.kind === 'array') return containsInteger(type.items);
  if (type.kind === 'union') return type.members.some(containsInteger);
  return false;
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

function isStandardLibraryType(type: Type, name: string): boolean {
  const symbol = type.getSymbol();
  return symbol !== undefined && symbol.getName() === name && isStandardLibrary(symbol);
}

/** `Page<Item>` → `PageOfItem`, `Pair<string, number>` → `PairOfStringAndNumber`. */
function instantiationName(genericName: string, type: Type): string {
  const args = type.getAliasTypeArguments().length > 0 ? type.getAliasTypeArguments() : type.getTypeArguments();
  const argumentName = (argument: Type): string => {
    const named = argument.getAliasSymbol() ?? argument.getSymbol();
    if (argument.isArray()) return `${argumentName(argument.getArrayElementTypeOrThrow())}List`;
    if (named && !named.getName().startsWith('__')) return named.getName();
    const text = argument
      .getText()
      .replace(/[^A-Za-z0-9]+/g, ' ')
      .trim();
    const words = text === '' ? ['Object'] : text.split(' ').slice(0, 3);
    return words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
  };
  return `${genericName}Of${args.map(argumentName).join('And')}`;
}

/** Numbers ascending, then strings, then `false`, `true`. */
function compareLiterals(a: string | number | boolean, b: string | number | boolean): number {
  const rank = (value: string | number | boolean) => ['number', 'string', 'boolean'].indexOf(typeof value);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
