/**
 * JSDoc tags on a property or parameter → schema annotations (`title`, `examples`, `deprecated`)
 * and validation keywords folded into the property's `TypeIR` (`minimum`, `format`, ...).
 *
 * A constraint goes to the first type it makes sense for: the type itself, else the element of
 * an array, the non-null member of a nullable, or the base of a brand. So `@minimum 0` on
 * `number[] | null` bounds the numbers. A tag that fits nothing is an error; a tag the generator
 * does not know at all is a warning, because it is more likely a typo than a deliberate comment.
 */
import { DiagnosticCode } from '../diagnostics.js';
import type { JsonValue, StringFormatIR, TypeIR } from '../ir.js';
import type { JsDocTag } from './jsdoc.js';
import type { DiagnosticSink } from './report.js';

export interface Annotations {
  readonly title?: string;
  readonly examples?: readonly JsonValue[];
  readonly deprecated?: boolean;
}

const NUMERIC_BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;
const STRING_LENGTHS = ['minLength', 'maxLength'] as const;
const ARRAY_LENGTHS = ['minItems', 'maxItems'] as const;
const FORMATS: readonly StringFormatIR[] = ['email', 'uri', 'uuid', 'date', 'date-time'];

/** Tags with a meaning here, including those read elsewhere (`@default`, `@integer`, `@param`). */
const SCHEMA_TAGS: ReadonlySet<string> = new Set([
  'title',
  'default',
  'example',
  'deprecated',
  'integer',
  'format',
  'pattern',
  ...NUMERIC_BOUNDS,
  ...STRING_LENGTHS,
  ...ARRAY_LENGTHS,
]);

/** Documentation tags of JSDoc and TSDoc that say nothing about the schema, accepted silently. */
const DOCUMENTATION_TAGS: ReadonlySet<string> = new Set([
  'param',
  'returns',
  'return',
  'see',
  'remarks',
  'since',
  'internal',
  'todo',
  'throws',
  'link',
  'mcpTaskgen',
  'description',
  'summary',
  'typeParam',
  'template',
  'inheritDoc',
  'override',
  'public',
  'private',
  'protected',
  'readonly',
  'beta',
  'alpha',
  'experimental',
  'privateRemarks',
  'author',
  'version',
  'license',
  'ignore',
]);

/** Warns about every tag that is neither a schema tag nor a known documentation tag. */
export function reportUnknownTags(tags: readonly JsDocTag[], subject: string, sink: DiagnosticSink): void {
  for (const tag of tags) {
    if (SCHEMA_TAGS.has(tag.name) || DOCUMENTATION_TAGS.has(tag.name)) continue;
    sink.warning(
      DiagnosticCode.UnknownJsDocTag,
      tag.range,
      `${subject}: mcp-taskgen ignores the JSDoc tag @${tag.name}`,
      `Schema tags are ${[...SCHEMA_TAGS].map((name) => `@${name}`).join(', ')}; check the spelling.`,
    );
  }
}

/** The annotations in `tags`; reports malformed values and returns `undefined` if there were any. */
export function readAnnotations(
  tags: readonly JsDocTag[],
  subject: string,
  sink: DiagnosticSink,
): Annotations | undefined {
  let valid = true;
  const annotations: { title?: string; examples?: JsonValue[]; deprecated?: boolean } = {};
  for (const tag of tags) {
    if (tag.name === 'title') {
      if (!tag.text) {
        sink.error(
          DiagnosticCode.InvalidJsDocTag,
          tag.range,
          `${subject}: @title needs text`,
          'Write @title Short name.',
        );
        valid = false;
      } else annotations.title = tag.text;
    } else if (tag.name === 'example' && tag.text !== undefined) {
      annotations.examples = [...(annotations.examples ?? []), parseJsonOrText(tag.text)];
    } else if (tag.name === 'deprecated') {
      annotations.deprecated = true;
    }
  }
  return valid ? annotations : undefined;
}

/**
 * Folds the validation tags into `type`. Returns the constrained type, or `undefined` after
 * reporting a tag whose value is malformed or that fits no part of the type.
 */
export function applyConstraints(
  type: TypeIR,
  tags: readonly JsDocTag[],
  subject: string,
  sink: DiagnosticSink,
): TypeIR | undefined {
  let current: TypeIR | undefined = type;
  for (const tag of tags) {
    if (!current) return undefined;
    const fail = (message: string, hint: string): undefined => {
      sink.error(DiagnosticCode.InvalidJsDocTag, tag.range, `${subject}: ${message}`, hint);
      return undefined;
    };
    const name = tag.name;
    if ((NUMERIC_BOUNDS as readonly string[]).includes(name)) {
      const bound = Number(tag.text);
      if (tag.text === undefined || !Number.isFinite(bound))
        return fail(`@${name} needs a number, got '${tag.text ?? ''}'`, `Write @${name} 0.`);
      current = constrain(current, (leaf) =>
        leaf.kind === 'number' || leaf.kind === 'integer' ? { ...leaf, [name]: bound } : undefined,
      );
      if (!current) return fail(`@${name} applies to numbers`, 'Remove the tag, or put it on a number property.');
    } else if (
      (STRING_LENGTHS as readonly string[]).includes(name) ||
      (ARRAY_LENGTHS as readonly string[]).includes(name)
    ) {
      const length = Number(tag.text);
      if (!Number.isInteger(length) || length < 0)
        return fail(`@${name} needs a non-negative integer, got '${tag.text ?? ''}'`, `Write @${name} 1.`);
      const wantsArray = (ARRAY_LENGTHS as readonly string[]).includes(name);
      current = constrain(current, (leaf) =>
        (wantsArray ? leaf.kind === 'array' : leaf.kind === 'string') ? { ...leaf, [name]: length } : undefined,
      );
      if (!current)
        return fail(
          `@${name} applies to ${wantsArray ? 'arrays' : 'strings'}`,
          'Remove the tag, or move it to a property of that type.',
        );
    } else if (name === 'pattern') {
      const pattern = tag.text ?? '';
      if (!isRegExp(pattern))
        return fail(
          `@pattern '${pattern}' is not a valid regular expression`,
          'Write the pattern without slashes, e.g. @pattern ^[a-z]+$ (it is compiled with the u flag).',
        );
      current = constrain(current, (leaf) => (leaf.kind === 'string' ? { ...leaf, pattern } : undefined));
      if (!current) return fail('@pattern applies to strings', 'Remove the tag, or put it on a string property.');
    } else if (name === 'format') {
      const format = FORMATS.find((candidate) => candidate === tag.text);
      if (!format) return fail(`unknown @format '${tag.text ?? ''}'`, `Use one of ${FORMATS.join(', ')}.`);
      current = constrain(current, (leaf) => (leaf.kind === 'string' ? { ...leaf, format } : undefined));
      if (!current) return fail('@format applies to strings', 'Remove the tag, or put it on a string property.');
    }
  }
  return current;
}

/** Applies `patch` to the first type along the path type → array items / non-null member / brand base. */
function constrain(type: TypeIR, patch: (leaf: TypeIR) => TypeIR | undefined): TypeIR | undefined {
  const direct = patch(type);
  if (direct) return direct;
  switch (type.kind) {
    case 'array': {
      const items = constrain(type.items, patch);
      return items && { ...type, items };
    }
    case 'union': {
      const nonNull = type.members.filter((member) => member.kind !== 'null');
      const only = nonNull[0];
      if (nonNull.length !== 1 || !only) return undefined;
      const constrained = constrain(only, patch);
      return (
        constrained && { ...type, members: type.members.map((member) => (member === only ? constrained : member)) }
      );
    }
    case 'brand': {
      const base = patch(type.base);
      return base && (base.kind === 'string' || base.kind === 'number' || base.kind === 'integer')
        ? { ...type, base }
        : undefined;
    }
    default:
      return undefined;
  }
}

function parseJsonOrText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

function isRegExp(pattern: string): boolean {
  if (pattern === '') return false;
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}
