/**
 * Replay keys of the durable waits (`ctx.sleep`, `ctx.callback`, `ctx.spawn`): the first call
 * of a name in a run keeps the name, the next ones add the mark and their count (`ci#2`,
 * `ci#3`). A run replayed after a pause meets the same keys in the same order. `#` is a mark no callback name, tool name or
 * sleep name may hold, so a repeat (`ci#2`) never meets a name of its own (`ci-2`).
 */
export const REPEAT_MARK = '#';

/** The key of the `count`-th call (from 1) under `name` in one run. */
export function repeatKey(name: string, count: number): string {
  return count === 1 ? name : `${name}${REPEAT_MARK}${count}`;
}
