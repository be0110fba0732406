/**
 * Dialect B push: `notifications/tasks/status` to the session that created a task, whenever
 * its status (as B reports it) changes. Outside any request, so it travels on the session's
 * standalone stream (the GET SSE stream over HTTP, stdout over stdio).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { TaskEngine } from '../engine/engine.js';
import { isTerminal } from '../engine/task.js';
import { statusB, toTaskB } from '../protocol/dialect-b.js';

export interface StatusPush {
  track(taskId: string): void;
  detach(): void;
}

export function attachStatusPush(server: Server, engine: TaskEngine): StatusPush {
  const tracked = new Set<string>();
  const unsubscribe = engine.subscribe(({ record, previous }) => {
    if (!tracked.has(record.taskId) || !previous || statusB(previous) === statusB(record)) return;
    if (isTerminal(record.status)) tracked.delete(record.taskId);
    if (!server.transport) return;
    void server.notification({ method: 'notifications/tasks/status', params: toTaskB(record) } as never).catch(() => {
      // The client went away; polling still works for whoever comes back.
    });
  });
  return {
    track: (taskId) => tracked.add(taskId),
    detach: () => {
      tracked.clear();
      unsubscribe();
    },
  };
}
