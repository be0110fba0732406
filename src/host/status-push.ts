/**
 * 2025-11-25 push, to the session that created a task: `notifications/tasks/status` whenever its
 * status (as B reports it) changes (2025-11-25 tasks), and `notifications/progress` on the
 * call's `progressToken` whenever the method reports numbers, since that token stays valid for
 * the task's whole life (docs/design/protocol-rules.md §4.9.6). Outside any request, so they travel on the session's
 * standalone stream (the GET SSE stream over HTTP, stdout over stdio).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Caller, TaskEngine } from '../engine/engine.js';
import { type FollowHandlers, TaskFollower } from '../engine/follow.js';
import { expiresAt, isTerminal, type TaskRecord } from '../engine/task.js';
import { status2025, toTask2025 } from '../protocol/tasks-2025.js';

export type ProgressToken = string | number;

export interface StatusPush {
  track(taskId: string, caller: Caller, progressToken?: ProgressToken): void;
  detach(): void;
}

export function attachStatusPush(server: Server, engine: TaskEngine): StatusPush {
  /** Progress tokens of the calls that created the tracked tasks, if any. */
  const tokens = new Map<string, ProgressToken | undefined>();
  const send = (notification: { method: string; params: Record<string, unknown> }) => {
    if (!server.transport) return;
    void server.notification(notification as never).catch(() => {
      // The client went away; polling still works for whoever comes back.
    });
  };
  // The follower re-reads the tracked tasks after a gap in the runtime's events and at their
  // expiry, and hands over each version once: no status is missed and none is sent twice.
  // One per principal (a session nearly always has one), since a follower reads as its caller.
  const followers = new Map<string | null, TaskFollower>();
  const followerFor = (caller: Caller): TaskFollower => {
    let follower = followers.get(caller.principal);
    if (!follower) {
      follower = new TaskFollower(engine, caller, handlers);
      followers.set(caller.principal, follower);
    }
    return follower;
  };
  const handlers: FollowHandlers = {
    onChange: (record, known) => {
      // A task's first version seen here is compared with how it was created: working, no progress.
      const previous: Pick<TaskRecord, 'status' | 'progress' | 'keepAliveMs' | 'outcome'> = known ?? {
        status: 'working',
      };
      const progressToken = tokens.get(record.taskId);
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
      if (isTerminal(record.status)) forget(record.taskId);
      if (status2025(previous as TaskRecord) === status2025(record)) return;
      send({ method: 'notifications/tasks/status', params: { ...toTask2025(record) } });
    },
    onGone: (taskId, last) => {
      tokens.delete(taskId);
      // Expired (or deleted) before it ended: its last status says so; tasks/get says not found.
      if (last && !isTerminal(last.status)) {
        const now = Date.now();
        const expired = now >= expiresAt(last);
        const gone: TaskRecord = {
          ...last,
          status: 'failed',
          statusMessage: expired ? 'Task has expired' : 'Task was deleted',
          lastUpdatedAt: now,
        };
        send({ method: 'notifications/tasks/status', params: { ...toTask2025(gone) } });
      }
    },
  };
  const forget = (taskId: string) => {
    tokens.delete(taskId);
    for (const follower of followers.values()) follower.drop(taskId);
  };
  return {
    track: (taskId, caller, progressToken) => {
      tokens.set(taskId, progressToken);
      void followerFor(caller).follow(taskId);
    },
    detach: () => {
      tokens.clear();
      for (const follower of followers.values()) follower.close();
      followers.clear();
    },
  };
}

function progressMoved(previous: Pick<TaskRecord, 'progress'>, record: TaskRecord): boolean {
  return (
    record.progress !== undefined &&
    (record.progress.progress !== previous.progress?.progress || record.progress.total !== previous.progress?.total)
  );
}
