/**
 * The JSDoc the generator reads: descriptions, `@param`, `@default` and `@integer`. Text is
 * normalised (LF, no trailing blanks) so that output does not change with the checkout's line endings.
 */
import { Node, ts } from 'ts-morph';
import type { TextRange } from './report.js';

export interface JsDocTag {
  readonly name: string;
  readonly text: string | undefined;
  /** Where the tag is written, for diagnostics that point at a bad tag. */
  readonly range: TextRange;
}

/** The description block of the node's JSDoc (the last one when there are several, as TS does). */
export function jsDocDescription(node: Node): string | undefined {
  if (!Node.isJSDocable(node)) return undefined;
  const docs = node.getJsDocs();
  const last = docs[docs.length - 1];
  return last ? normaliseText(last.getDescription()) : undefined;
}

/**
 * Tags that apply to the node. For a parameter this includes the owning function's
 * `@param <name>` tag and a `/** ... *\/` comment written directly before the parameter.
 */
export function jsDocTags(node: Node): JsDocTag[] {
  return ts.getJSDocTags(node.compilerNode).map((tag) => ({
    name: tag.tagName.text,
    text: normaliseText(ts.getTextOfJSDocComment(tag.comment)),
    range: {
      sourceFile: node.getSourceFile(),
      start: tag.getStart(node.getSourceFile().compilerNode),
      end: tag.getEnd(),
    },
  }));
}

/** `@param limit - Max rows` → `Max rows`. */
export function parameterDescription(parameter: Node): string | undefined {
  const tag = jsDocTags(parameter).find((candidate) => candidate.name === 'param');
  return tag?.text?.replace(/^-\s*/, '') || undefined;
}

export function hasJsDocTag(node: Node, name: string): boolean {
  return jsDocTags(node).some((tag) => tag.name === name);
}

function normaliseText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const normalised = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
  return normalised === '' ? undefined : normalised;
}
