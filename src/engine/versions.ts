/**
 * Which of two versions of one task is the later: what a follower needs to deliver each version
 * once and never an older one after a newer (see follow.ts), and the follower registry to tell
 * a re-read that found something the events did not bring.
 */
import { isTerminal, type TaskRecord } from './task.js';

/**
 * Whether `candidate` is a later version of a task than `known`. Every write (`applyChange`)
 * counts up the record's `revision`, so two versions compare by one number, whatever their
 * size, even when both were written in the same millisecond. Records written before revisions
 * existed compare by `lastUpdatedAt`, and on a tie by the fields a client sees change
 * (a terminal version is never followed by another: terminal is sticky).
 */
export function isNewer(candidate: TaskRecord, known: TaskRecord): boolean {
  if (candidate.revision !== undefined && known.revision !== undefined) return candidate.revision > known.revision;
  if (candidate.lastUpdatedAt !== known.lastUpdatedAt) return candidate.lastUpdatedAt > known.lastUpdatedAt;
  if (isTerminal(known.status)) return false;
  return (
    candidate.status !== known.status ||
    candidate.statusMessage !== known.statusMessage ||
    candidate.progress?.progress !== known.progress?.progress ||
    candidate.progress?.total !== known.progress?.total ||
    !sameKeys(candidate.inputRequests, known.inputRequests)
  );
}

function sameKeys(a: Readonly<Record<string, unknown>> | undefined, b: Readonly<Record<string, unknown>> | undefined) {
  const left = Object.keys(a ?? {});
  const right = Object.keys(b ?? {});
  return left.length === right.length && left.every((key) => b !== undefined && key in b);
}
