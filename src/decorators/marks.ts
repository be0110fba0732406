/**
 * The only runtime state decorators keep: which method functions carry which mark.
 *
 * Keyed by the method function itself (TC39 `value`, legacy `descriptor.value`), so marking
 * needs no class instance, no `reflect-metadata` and no `Symbol.metadata`. The generated
 * glue asserts these marks at start-up to catch a manifest that no longer matches the source.
 */
import type { NeedsInputOptions, TaskOptions, ToolOptions } from './options.js';

export type MethodMark =
  | { readonly kind: 'task'; readonly options: TaskOptions }
  | { readonly kind: 'tool'; readonly options: ToolOptions };

const methodMarks = new WeakMap<Function, MethodMark>();
const questionMarks = new WeakMap<Function, Map<string, NeedsInputOptions>>();

export function setMethodMark(method: Function, mark: MethodMark): void {
  methodMarks.set(method, mark);
}

export function getMethodMark(method: unknown): MethodMark | undefined {
  return typeof method === 'function' ? methodMarks.get(method) : undefined;
}

export function addQuestionMark(method: Function, name: string, options: NeedsInputOptions): void {
  let questions = questionMarks.get(method);
  if (!questions) {
    questions = new Map();
    questionMarks.set(method, questions);
  }
  questions.set(name, options);
}

export function getQuestionMarks(method: unknown): ReadonlyMap<string, NeedsInputOptions> {
  return (typeof method === 'function' && questionMarks.get(method)) || new Map();
}
