/**
 * Child tasks (`ctx.spawn`): the pure part every runtime shares. A parent keeps its children in
 * `TaskRecord.children` by call-site key (`fetch_page`, `fetch_page-2`, ...), each child keeps
 * `TaskRecord.parent`, and a child's id follows from its parent's id and key, so a parent that
 * runs again (after a pause or a lost worker) finds the children it made and never starts one
 * twice, even when it died between creating a child and recording it.
 */
import { createHash } from 'node:crypto';
import { TaskPaused } from './errors.js';
import { type ChildEntry, isTerminal, type TaskRecord } from './task.js';

export type { ChildEntry, ParentLink } from './task.js';

import type { TaskChange } from './transitions.js';

/** Children one task may start unless configured otherwise (`maxChildrenPerTask`). */
export const DEFAULT_MAX_CHILDREN_PER_TASK = 1000;

/** The `_meta` key a child's wire task names its parent under (2025-11-25 and 2026-07-28). */
export const RELATED_TASK_IDS_META_KEY = 'io.modelcontextprotocol/relatedTaskIds';

/**
 * The id of the child a parent spawns under `key`: 128 bits of SHA-256 over both, so the same
 * parent and key always give the same id (a replay or a retried create finds the child), and
 * another principal cannot guess it without the parent's id. `attempt` varies the draw for
 * runtimes that need the id on a given shard (see `TaskRuntime.idForClaim`).
 */
export function childTaskId(parentTaskId: string, key: string, attempt = 0): string {
  return createHash('sha256')
    .update(`${parentTaskId}\u0000${key}\u0000${attempt}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** A deterministic sequence of candidate child ids, for `idForClaim`'s `draw`. */
export function childIdDraw(parentTaskId: string, key: string): () => string {
  let attempt = 0;
  return () => childTaskId(parentTaskId, key, attempt++);
}

/** "3 of 10 subtasks done": the parent's message while it waits for its children. */
export function childrenMessage(children: Readonly<Record<string, ChildEntry>>): string {
  const entries = Object.values(children);
  const done = entries.filter((entry) => entry.ended !== undefined).length;
  return `${done} of ${entries.length} subtask${entries.length === 1 ? '' : 's'} done`;
}

/** Whether `message` is one `childrenMessage` wrote (so a newer count may replace it). */
export function isChildrenMessage(message: string | undefined): boolean {
  return message !== undefined && /^\d+ of \d+ subtasks? done$/.test(message);
}

/**
 * Records the child spawned under `key` on its parent (keeping an `ended` already noted by a
 * quick child); `undefined` when there is nothing to write.
 */
export function spawnChange(parent: TaskRecord, key: string, entry: ChildEntry): TaskChange | undefined {
  if (isTerminal(parent.status)) return undefined;
  const known = parent.children?.[key];
  if (known && known.taskId === entry.taskId) return undefined;
  return { status: parent.status, children: { ...parent.children, [key]: { ...entry, ...known } } };
}

/**
 * The parent's change once its child `child` ended: the entry says so, and a parent that shows
 * a children count (it waits for them) shows the new one. `undefined` when nothing changes.
 */
export function childEndedChange(parent: TaskRecord, child: TaskRecord): TaskChange | undefined {
  const link = child.parent;
  if (!link || link.taskId !== parent.taskId || isTerminal(parent.status) || !isTerminal(child.status))
    return undefined;
  const known = parent.children?.[link.key];
  if (known?.ended !== undefined) return undefined;
  const children = { ...parent.children, [link.key]: { taskId: child.taskId, tool: child.tool, ended: child.status } };
  return {
    status: parent.status,
    children,
    ...(isChildrenMessage(parent.statusMessage) && { statusMessage: childrenMessage(children) }),
  };
}

/** The children of `record` that have not been seen to end, by id. */
export function unfinishedChildren(record: TaskRecord): string[] {
  return Object.values(record.children ?? {})
    .filter((entry) => entry.ended === undefined)
    .map((entry) => entry.taskId);
}

/** The message a child cancelled with its parent ends with. */
export const CANCELLED_WITH_PARENT = 'cancelled with its parent task';

/**
 * Thrown by `ExecutionControl.awaitChildren` when the runtime parks the task until its children
 * have ended (a `TaskPaused`, so code that lets pauses through lets this through too).
 */
export class ChildrenPaused extends TaskPaused {
  override readonly name: string = 'ChildrenPaused';
  constructor(
    /** Children awaited. */
    readonly count: number,
    /** Of them, ended already. */
    readonly done: number,
  ) {
    super(['children']);
    this.message = `The task is parked until its ${count} child tasks have ended (${done} done)`;
  }
}
