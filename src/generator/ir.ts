/**
 * The intermediate representation between the reader (ts-morph) and the emitters.
 *
 * Plain JSON by design: no ts-morph objects, no functions, no absolute paths. It is what the
 * snapshot tests pin down and the only thing emitters see, so every decision an emitter needs
 * (names, optionality, defaults, call shape) is resolved here. Kinds are discriminated unions so
 * additions are new members rather than new flags on old ones. Named types may refer to each other
 * in cycles (recursive types); emitters must not assume the reference graph is a tree.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type TaskSupportIR = 'forbidden' | 'optional' | 'required';

/**
 * How the method's return value reaches the client: `structured` (an object: `structuredContent`
 * plus its JSON as text), `text` (a string), `none` (void), `json` (any other JSON value, as text),
 * `content` (the framework's `ToolContent` blocks, passed through), `tool-result` (a whole
 * `ToolResult`, passed through).
 */
export type ResultShapeIR = 'structured' | 'text' | 'none' | 'json' | 'content' | 'tool-result';

export interface ManifestIR {
  /** Files that declare tools, relative to the tsconfig directory, POSIX, sorted. */
  readonly sourceFiles: readonly string[];
  /** Named object types (interfaces, type aliases) referenced by `{ kind: 'ref' }`, keyed and sorted by name. */
  readonly types: { readonly [name: string]: NamedTypeIR };
  /** Sorted by tool name. */
  readonly tools: readonly ToolIR[];
}

export interface ToolIR {
  /** Tool name on the wire, unique in the manifest. */
  readonly name: string;
  readonly decorator: 'task' | 'tool';
  readonly title?: string;
  readonly description?: string;
  readonly taskSupport: TaskSupportIR;
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number;
  readonly concurrency?: number;
  /** `@Task({ retry })`, as written (checked; the runtime fills in the defaults). */
  readonly retry?: RetryIR;
  /** `@Task({ timeoutMs })`: the longest one attempt may run. */
  readonly timeoutMs?: number;
  /** `@Task({ unawareClients })`: what callers without tasks get from the tool. */
  readonly unawareClients?: 'auto' | 'handle' | 'inline';
  /** `@Task({ idempotent: true })`: repeats of the same call return the first call's task. */
  readonly idempotent?: true;
  /** `@Task({ priority })`: 0 to 1000, lower runs first. */
  readonly priority?: number;
  /** `@Task({ priorityFromCall: true })`: a call may set its own priority in `_meta`. */
  readonly priorityFromCall?: true;
  /** `@Task({ version })`: the tool's version, pinning resumed tasks to workers that have it. */
  readonly version?: string;
  readonly target: TargetIR;
  /** `path/relative/to/tsconfig/dir.ts:line:col` of the method name. */
  readonly source: string;
  /** Always an object schema: positional parameters become its properties. */
  readonly input: ObjectTypeIR | RefTypeIR;
  /** How `invoke` maps validated arguments back onto the method's parameters, in order. */
  readonly call: readonly CallArgumentIR[];
  readonly output: OutputIR;
  /** In declaration order (top to bottom on the method). */
  readonly questions: readonly QuestionIR[];
  /** The `ctx.callback<Payload>(name)` hooks the method makes, by name, sorted; absent when none. */
  readonly callbacks?: readonly CallbackIR[];
}

/** One `ctx.callback<Payload>('name', ...)` hook: the payload may nest (it is not a form). */
export interface CallbackIR {
  readonly name: string;
  /** An object, inline or named. */
  readonly payload: ObjectTypeIR | RefTypeIR;
  /** `path:line:col` of the first call that makes it. */
  readonly source: string;
}

/** A `@Task({ retry })` literal, every field optional. */
export interface RetryIR {
  readonly attempts?: number;
  readonly backoff?: 'exponential' | 'fixed';
  readonly delayMs?: number;
  readonly maxDelayMs?: number;
  readonly jitter?: boolean;
}

export interface TargetIR {
  /** The name the class is exported under (usually its declared name). */
  readonly exportName: string;
  /** Module that exports the class, relative to the tsconfig directory, POSIX, with its TS extension. */
  readonly module: string;
  readonly method: string;
}

export type CallArgumentIR =
  /** `args.<name>`: one positional parameter. */
  | { readonly kind: 'property'; readonly name: string }
  /** `args`: the method takes the whole input object. */
  | { readonly kind: 'input' }
  /** `ctx`: the trailing `TaskContext` parameter. */
  | { readonly kind: 'context' };

export type OutputIR =
  | { readonly result: 'none' | 'content' | 'tool-result' }
  | { readonly result: 'structured' | 'text' | 'json'; readonly type: TypeIR };

export interface QuestionIR {
  readonly name: string;
  readonly message?: string;
  /** Asked on the tool call, before the task is created. */
  readonly upfront?: boolean;
  /** Flat: every property is a primitive or an enum, as elicitation requires. */
  readonly answer: ObjectTypeIR;
  readonly source: string;
}

export interface NamedTypeIR {
  readonly name: string;
  readonly description?: string;
  /** `path:line:col` of the declaration's name. */
  readonly source: string;
  readonly type: ObjectTypeIR;
}

export type TypeIR =
  | StringTypeIR
  | NumberTypeIR
  | IntegerTypeIR
  | BooleanTypeIR
  | NullTypeIR
  | EnumTypeIR
  | LiteralTypeIR
  | NativeEnumTypeIR
  | TemplateTypeIR
  | DateTimeTypeIR
  | ArrayTypeIR
  | TupleTypeIR
  | ObjectTypeIR
  | RecordTypeIR
  | UnionTypeIR
  | BrandTypeIR
  | UnknownTypeIR
  | RefTypeIR;

/** JSON Schema `format`s with a zod counterpart (`z.email()`, `z.url()`, ...). */
export type StringFormatIR = 'email' | 'uri' | 'uuid' | 'date' | 'date-time';

export interface StringTypeIR {
  readonly kind: 'string';
  readonly format?: StringFormatIR;
  readonly minLength?: number;
  readonly maxLength?: number;
  /** ECMAScript regular expression source, unanchored, as JSON Schema's `pattern`. */
  readonly pattern?: string;
}

/** Bounds from `@minimum`, `@maximum`, `@exclusiveMinimum`, `@exclusiveMaximum`. */
export interface NumericBoundsIR {
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}

export interface NumberTypeIR extends NumericBoundsIR {
  readonly kind: 'number';
}

export interface IntegerTypeIR extends NumericBoundsIR {
  readonly kind: 'integer';
}

export interface BooleanTypeIR {
  readonly kind: 'boolean';
}

export interface NullTypeIR {
  readonly kind: 'null';
}

/** A string-literal union (or a single string literal), in the order the source lists it. */
export interface EnumTypeIR {
  readonly kind: 'enum';
  readonly values: readonly string[];
}

/** Number or boolean literals, alone or mixed with strings (`1 | 2`, `true`, `'auto' | 0`). */
export interface LiteralTypeIR {
  readonly kind: 'literal';
  readonly values: readonly (string | number | boolean)[];
}

/**
 * A TypeScript `enum`, or some of its members (`kind: Kind.Circle`). Enum members are nominal
 * (`'red'` is not a `Color`), so the zod schema is built over the imported enum object:
 * `z.enum(Color)` for the whole enum, `z.literal(Color.Red)` / `z.literal([Color.Red, Color.Blue])`
 * for some members; the module must export the enum.
 */
export interface NativeEnumTypeIR {
  readonly kind: 'native-enum';
  /** The module that exports the enum, relative to the tsconfig directory, POSIX. */
  readonly module: string;
  readonly exportName: string;
  /** The members this type admits, in declaration order. */
  readonly members: readonly EnumMemberIR[];
  /** Every member of the enum (the enum type itself), rather than some of them. */
  readonly whole: boolean;
}

export interface EnumMemberIR {
  readonly name: string;
  readonly value: string | number;
}

/** One piece of a template literal type: fixed text, or a placeholder. */
export type TemplatePartIR =
  | { readonly kind: 'text'; readonly text: string }
  /** TypeScript expands literal and boolean placeholders into unions, so only these two remain. */
  | { readonly kind: 'string' | 'number' };

/** `` `user-${number}` ``: a string matching `pattern` (what `z.templateLiteral` derives from `parts`). */
export interface TemplateTypeIR {
  readonly kind: 'template';
  readonly parts: readonly TemplatePartIR[];
  /** Anchored ECMAScript regular expression source, identical to zod's for the same parts. */
  readonly pattern: string;
}

/** `Date`: an ISO-8601 date-time string on the wire, a `Date` in the method. */
export interface DateTimeTypeIR {
  readonly kind: 'date-time';
}

export interface ArrayTypeIR {
  readonly kind: 'array';
  readonly items: TypeIR;
  /** `readonly T[]`: the parsed value is typed (and frozen) as readonly so it stays assignable back. */
  readonly readonly: boolean;
  readonly minItems?: number;
  readonly maxItems?: number;
}

/** `[string, number]`, optionally with a rest element (`[string, ...number[]]`). */
export interface TupleTypeIR {
  readonly kind: 'tuple';
  readonly items: readonly TypeIR[];
  readonly rest?: TypeIR;
  readonly readonly: boolean;
}

export interface ObjectTypeIR {
  readonly kind: 'object';
  /** In declaration order. */
  readonly properties: readonly PropertyIR[];
}

/** `Record<string, V>`, `{ [key: string]: V }` and template-literal keys (`Record<\`x-${string}\`, V>`). */
export interface RecordTypeIR {
  readonly kind: 'record';
  readonly key: StringTypeIR | TemplateTypeIR;
  readonly values: TypeIR;
}

export interface UnionTypeIR {
  readonly kind: 'union';
  /** In a stable order: `null` last, otherwise as the checker lists them. */
  readonly members: readonly TypeIR[];
  /**
   * Set when every member is an object with this property holding distinct string values (string
   * literals or string-enum members): JSON Schema `oneOf` plus `discriminator`, zod
   * `z.discriminatedUnion`. OpenAPI's `discriminator` takes string tags only, so boolean and
   * number tags leave the union a plain `anyOf`.
   */
  readonly discriminator?: string;
}

/**
 * `string & { __brand: 'UserId' }`: validated as its base type; the zod schema is typed with the
 * brand so that the method still receives a `UserId`.
 */
export interface BrandTypeIR {
  readonly kind: 'brand';
  readonly base: StringTypeIR | NumberTypeIR | IntegerTypeIR | BooleanTypeIR;
  /** The brand's properties with their literal types, printed back as a TypeScript type. */
  readonly brand: readonly {
    readonly name: string;
    readonly value: string | number | boolean;
    readonly optional: boolean;
  }[];
}

/** `unknown`: any JSON value, `{}` in JSON Schema; the reader warns because nothing is validated. */
export interface UnknownTypeIR {
  readonly kind: 'unknown';
}

export interface RefTypeIR {
  readonly kind: 'ref';
  /** Key into `ManifestIR.types`. */
  readonly name: string;
}

export interface PropertyIR {
  readonly name: string;
  readonly type: TypeIR;
  /** May be absent from the input (`?:`, `| undefined`, or a default). */
  readonly optional: boolean;
  /**
   * Declared without `?` but with `undefined` in its type (`inStock: boolean | undefined`): absent
   * on the wire is fine, yet the method's type has the key, so the parsed object must be typed so.
   */
  readonly keyRequired?: boolean;
  readonly description?: string;
  /** Filled in when absent; checked against `type` by the reader. */
  readonly default?: JsonValue;
  /** `@title`. */
  readonly title?: string;
  /** `@example`, each parsed as JSON when it is JSON, else kept as text. */
  readonly examples?: readonly JsonValue[];
  /** `@deprecated`. */
  readonly deprecated?: boolean;
}
