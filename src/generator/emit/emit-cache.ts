/**
 * What `--watch` keeps between runs of the module emitter: the code built for each tool and each
 * named schema, with every lookup that building it made (the named types it read, the identifiers
 * it was given, which schema constants were declared above it). A later run reuses that code only
 * if the unit's own IR is the same and every recorded lookup still answers the same, so a change
 * in any type a tool uses, however indirectly, rebuilds the tool; nothing has to list dependencies
 * by hand, and a new lookup in an emitter is recorded as soon as it goes through `EmitInputs`.
 *
 * Output is byte-for-byte the same with or without a cache (the tests check both).
 */
import type { ManifestIR } from '../ir.js';
import type { ModuleNames } from './names.js';

/** Everything a cached unit of code may depend on besides its own IR. */
export interface EmitInputs {
  readonly ir: ManifestIR;
  readonly names: ModuleNames;
  /** Whether the named schema constant `schemaName` is declared above the code being built. */
  readonly isDeclared: (schemaName: string) => boolean;
}

/** Whether other inputs give the same answer to a lookup made while building. */
type Check = (inputs: EmitInputs) => boolean;

interface Entry {
  readonly own: string;
  readonly checks: readonly Check[];
  readonly value: unknown;
  lastRun: number;
}

export class EmitCache {
  private readonly entries = new Map<string, Entry>();
  private run = 0;
  private reused = 0;
  private built = 0;

  /**
   * `build(inputs)`, or what it returned last time for `key` if `own` (the unit's own IR, as
   * JSON) is unchanged and every lookup it made gives the same answer on `inputs`.
   */
  reuse<T>(key: string, own: string, inputs: EmitInputs, build: (inputs: EmitInputs) => T): T {
    const entry = this.entries.get(key);
    if (entry && entry.own === own && entry.checks.every((check) => check(inputs))) {
      entry.lastRun = this.run;
      this.reused++;
      return entry.value as T;
    }
    // By what was asked: building asks for the same name or type many times; one check is enough.
    const checks = new Map<string, Check>();
    const value = build(
      tracked(inputs, (id, check) => {
        if (!checks.has(id)) checks.set(id, check);
      }),
    );
    this.entries.set(key, { own, checks: [...checks.values()], value, lastRun: this.run });
    this.built++;
    return value;
  }

  /** Ends a run: forgets units the run did not ask for (a removed tool, a renamed type). */
  endRun(): void {
    for (const [key, entry] of this.entries) if (entry.lastRun !== this.run) this.entries.delete(key);
    this.run++;
  }

  /** Units reused and built since the cache was made; for tests and benchmarks. */
  stats(): { readonly reused: number; readonly built: number } {
    return { reused: this.reused, built: this.built };
  }
}

/** JSON of a unit's own IR; remembered per object, since one run asks for a definition many times. */
export function fingerprint(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  let json = fingerprints.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    fingerprints.set(value, json);
  }
  return json;
}

const fingerprints = new WeakMap<object, string>();

/** `inputs`, with every lookup through it recorded under what was asked (`id`). */
function tracked(inputs: EmitInputs, record: (id: string, check: Check) => void): EmitInputs {
  const types = new Proxy(inputs.ir.types, {
    get(target, name, receiver) {
      if (typeof name !== 'string') return Reflect.get(target, name, receiver);
      const definition = target[name];
      const seen = fingerprint(definition);
      record(`type ${name}`, ({ ir }) => fingerprint(ir.types[name]) === seen);
      return definition;
    },
    has(target, name) {
      const present = Reflect.has(target, name);
      record(`has ${String(name)}`, ({ ir }) => Reflect.has(ir.types, name) === present);
      return present;
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target);
      const seen = JSON.stringify(keys);
      record('type names', ({ ir }) => JSON.stringify(Reflect.ownKeys(ir.types)) === seen);
      return keys;
    },
  });
  // Anything else of the manifest (its tools, its files) is compared whole.
  const ir = new Proxy(inputs.ir, {
    get(target, property, receiver) {
      if (property === 'types') return types;
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property === 'string') {
        const seen = fingerprint(value);
        record(`manifest ${property}`, (other) => fingerprint(Reflect.get(other.ir, property)) === seen);
      }
      return value;
    },
  });
  const names = Object.fromEntries(
    (Object.keys(inputs.names) as (keyof ModuleNames)[]).map((method) => {
      const ask = (from: ModuleNames, args: readonly string[]) =>
        (from[method] as (...args: readonly string[]) => string)(...args);
      const lookup = (...args: string[]) => {
        const answer = ask(inputs.names, args);
        record(`${method} ${args.join('\0')}`, (other) => answersSame(() => ask(other.names, args), answer));
        return answer;
      };
      return [method, lookup];
    }),
  ) as unknown as ModuleNames;
  const isDeclared = (schemaName: string) => {
    const declared = inputs.isDeclared(schemaName);
    record(`declared ${schemaName}`, (other) => other.isDeclared(schemaName) === declared);
    return declared;
  };
  return { ir, names, isDeclared };
}

/** A lookup that now throws (an identifier no longer allocated) answers differently. */
function answersSame(lookup: () => string, answer: string): boolean {
  try {
    return lookup() === answer;
  } catch {
    return false;
  }
}
