/**
 * Dialect B push, to the session that created a task: `notifications/tasks/status` whenever its
 * status (as B reports it) changes (2025-11-25 tasks), and `notifications/progress` on the
 * call's `progressToken` whenever the method reports numbers, since that token stays valid for
 * the task's whole life (§4.9 rule 6). Outside any request, so they travel on the session's
 * standalone stream (the GET SSE stream over HTTP, stdout over stdio).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { TaskEngine } from '../engine/engine.js';
import { isTerminal, type TaskRecord } from '../engine/task.js';
import { statusB, toTaskB } from '../protocol/dialect-b.js';

export type ProgressToken = string | number;

export interface StatusPush {
  track(taskId: string, progressToken?: ProgressToken): void;
  detach(): void;
}

export function attachStatusPush(server: Server, engine: TaskEngine): StatusPush {
  /** Tracked task ids, with the progress token of the call that created each, if any. */
  const tracked = new Map<string, ProgressToken | undefined>();
  const send = (notification: { method: string; params: Record<string, unknown> }) => {
    if (!server.transport) return;
    void server.notification(notification as never).catch(() => {
      // The client went away; polling still works for whoever comes back.
    });
  };
  const unsubscribe = engine.subscribe(({ record, previous }) => {
    if (!tracked.has(record.taskId) || !previous) return;
    const progressToken = tracked.get(record.taskId);
    if (progressToken !== undefined && progressMoved(previous, record) && record.progress) {
      send({
        method: 'notifications/progress',
        params: {
          progressToken,
          progress: record.progress.progress,
          ...(record.progress.total !== undefined && { total: record.progress.total }),
          ...(record.statusMessage !== undefined && { message: record.statusMessage }),
        },
      });
    }
    if (statusB(previous) === statusB(record)) return;
    if (isTerminal(record.status)) tracked.delete(record.taskId);
    send({ method: 'notifications/tasks/status', params: { ...toTaskB(record) } });
  });
  return {
    track: (taskId, progressToken) => tracked.set(taskId, progressToken),
    detach: () => {
      tracked.clear();
      unsubscribe();
    },
  };
}

function progressMoved(previous: TaskRecord, record: TaskRecord): boolean {
  return (
    record.progress !== undefined &&
    (record.progress.progress !== previous.progress?.progress || record.progress.total !== previous.progress?.total)
  );
}
