import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createTaskServer, Task, type TaskContext } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

declare const mailer: { send(to: string, subject: string): Promise<{ id: string }> };
declare const index: { rebuild(repository: string, signal: AbortSignal): Promise<number> };
declare const client: Client;

export class Mail {
  // #region idempotent
  /** Sends one message; a repeated call with the same arguments gets the same task. */
  @Task({ idempotent: true })
  async sendReport(input: { to: string; subject: string }) {
    return mailer.send(input.to, input.subject);
  }
  // #endregion idempotent

  // #region priority
  /** Background work: waits behind tasks of lower numbers; a call may ask for another priority. */
  @Task({ priority: 10, priorityFromCall: true })
  async reindex(input: { repository: string }, ctx: TaskContext) {
    return { documents: await index.rebuild(input.repository, ctx.signal) };
  }
  // #endregion priority

  // #region version
  /**
   * Version 4 reads a new question. A task parked on version 3's question resumes only on a
   * worker that still runs version 3, never on this code.
   */
  @Task({ version: '4' })
  async migrateMailbox(input: { mailbox: string }, ctx: TaskContext) {
    return ctx.step('copied', () => mailer.send(input.mailbox, 'Your mailbox moved'));
  }
  // #endregion version
}

// #region client-key
const created = await client.request(
  {
    method: 'tools/call',
    params: {
      name: 'send_report',
      arguments: { to: 'ops@example.com', subject: 'Weekly' },
      task: {},
      // The same key again (a retry after a lost response) returns this task; nothing runs twice.
      _meta: { 'mcp-task-server/idempotencyKey': 'weekly-2026-12-01', 'mcp-task-server/priority': 1 },
    },
  },
  CreateTaskResultSchema,
);
console.log(created.task.taskId);
// #endregion client-key

// #region window
// Keys hold for ten minutes instead of the task's whole retention.
createTaskServer({ manifest: taskManifest, instances: [new Primes()], policy: { idempotencyWindowMs: 600_000 } });
// #endregion window

// #region version-wait
// Resumed tasks wait up to two minutes for a worker with their version, then fail.
createTaskServer({
  manifest: taskManifest,
  instances: [new Primes()],
  redis: { connection: 'redis://127.0.0.1:6379', worker: { versionWaitMs: 120_000 } },
});
// #endregion version-wait
