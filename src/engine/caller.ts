/**
 * Who asks, and which tasks that caller may see. Apart from `engine.ts` so that the engine and
 * the followers it creates (`follow.ts`) both read the one owner rule without importing each other.
 */
import { createHash } from 'node:crypto';
import type { TaskRecord } from './task.js';

/** Who is asking. `principal` is `null` when nothing identifies the caller. */
export interface Caller {
  readonly principal: string | null;
  /**
   * For a caller without a principal: the opaque budget its live-task quota counts against
   * (the host's digest of its address), absent when nothing is known of it. Decides no access.
   */
  readonly liveBudget?: string;
}

/**
 * An owned task is its owner's alone. A task without an owner is anyone's holding its id, since
 * that id carries 128 random bits and is the capability, unless the client chose the id
 * (SEP-1686): a chosen id such as `job-1` is guessable, so such a task is found only in the
 * namespace of the caller that created it (`clientTaskKey`), whatever id or method is used.
 */
export function isVisibleTo(record: TaskRecord, caller: Caller): boolean {
  if (record.clientTaskId !== undefined) {
    return record.owner === caller.principal && record.taskId === clientTaskKey(caller, record.clientTaskId);
  }
  return record.owner === null || record.owner === caller.principal;
}

/**
 * Where a SEP-1686 task with a client-chosen id is stored: the id inside the caller's namespace
 * (a digest of the principal, so ids of different principals never meet, and never all digits,
 * which BullMQ refuses as job ids). The client keeps seeing its own id (`clientTaskId`).
 */
export function clientTaskKey(caller: Caller, clientTaskId: string): string {
  const namespace = createHash('sha256')
    .update(caller.principal === null ? 'anonymous' : `principal:${caller.principal}`)
    .digest('base64url')
    .slice(0, 16);
  return `c.${namespace}.${clientTaskId}`;
}
