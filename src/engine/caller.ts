/**
 * Who asks, and which tasks that caller may see. Apart from `engine.ts` so that the engine and
 * the followers it creates (`follow.ts`) both read the one owner rule without importing each other.
 */
import type { TaskRecord } from './task.js';

/** Who is asking. `principal` is `null` when nothing identifies the caller. */
export interface Caller {
  readonly principal: string | null;
}

/** A task without an owner is anyone's (its id is the capability); an owned one is its owner's alone. */
export function isVisibleTo(record: TaskRecord, caller: Caller): boolean {
  return record.owner === null || record.owner === caller.principal;
}
