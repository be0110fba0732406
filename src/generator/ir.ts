/**
 * The intermediate representation between the reader (ts-morph) and the emitters.
 *
 * Plain JSON by design: no ts-morph objects, no functions, no absolute paths. It is what the
 * snapshot tests pin down and the only thing emitters see, so every decision an emitter needs
 * (names, optionality, defaults, call shape) is resolved here. Kinds are discriminated unions so
 * later additions (unions, tuples, records, Date, recursion, constraints) are new members rather
 * than new flags on old ones.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type TaskSupportIR = 'forbidden' | 'optional' | 'required';

export type ResultShapeIR = 'structured' | 'text' | 'none' | 'json';

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
  | { readonly result: 'none' }
  | { readonly result: Exclude<ResultShapeIR, 'none'>; readonly type: TypeIR };

export interface QuestionIR {
  readonly name: string;
  readonly message?: string;
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
  | EnumTypeIR
  | ArrayTypeIR
  | ObjectTypeIR
  | RefTypeIR;

export interface StringTypeIR {
  readonly kind: 'string';
}

export interface NumberTypeIR {
  readonly kind: 'number';
}

export interface IntegerTypeIR {
  readonly kind: 'integer';
}

export interface BooleanTypeIR {
  readonly kind: 'boolean';
}

/** A string-literal union (or a single string literal), in the order the source lists it. */
export interface EnumTypeIR {
  readonly kind: 'enum';
  readonly values: readonly string[];
}

export interface ArrayTypeIR {
  readonly kind: 'array';
  readonly items: TypeIR;
  /** `readonly T[]`: the parsed value is typed (and frozen) as readonly so it stays assignable back. */
  readonly readonly: boolean;
}

export interface ObjectTypeIR {
  readonly kind: 'object';
  /** In declaration order. */
  readonly properties: readonly PropertyIR[];
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
  readonly description?: string;
  /** Filled in when absent; checked against `type` by the reader. */
  readonly default?: JsonValue;
}
