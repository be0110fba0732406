/**
 * The audit trail (B-67): create, answer, cancel, delete and result retrieval each leave one
 * info line (the task lifecycle log) naming the principal, the task and the tool, and never
 * what was sent or answered.
 */
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { tokenTableVerifier } from '../../src/host/token-table.js';
import type { Logger } from '../../src/observe/logger.js';
import { connectV1, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

const lines: { level: string; message: string; data?: Record<string, unknown> }[] = [];
const capture = (level: string) => (message: string, data?: Record<string, unknown>) => {
  lines.push({ level, message, ...(data && { data }) });
};
const logger: Logger = {
  debug: capture('debug'),
  info: capture('info'),
  warn: capture('warn'),
  error: capture('error'),
};
const SECRET_ARGUMENT = 'secret-label-4711';
const SECRET_ANSWER = 'secret-answer-0815';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    sep1686: true,
    http: { auth: { verifier: tokenTableVerifier({ alice: { sub: 'alice', clientId: 'c1' } }) } },
    logger,
  });
});

afterAll(() => running?.close());

const AUDITED = new Set(['created', 'answered', 'cancelled', 'deleted', 'result_read']);
const audited = () =>
  lines
    .filter((line) => AUDITED.has(line.data?.event as string))
    .map(({ data }) => ({ event: data?.event, principal: data?.principal, taskId: data?.taskId, tool: data?.tool }));

describe('audit log', () => {
  it('records who created, answered, read, cancelled and deleted which task of which tool', async () => {
    const alice = await connectV1(running.url, { token: 'alice' });
    const created = await alice.request(
      {
        method: 'tools/call',
        params: { name: 'slow_compute', arguments: { seconds: 0, label: SECRET_ARGUMENT }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    const long = await alice.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30, label: 'c' }, task: {} } },
      CreateTaskResultSchema,
    );
    await alice.experimental.tasks.cancelTask(long.task.taskId);

    const asking = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'f' } },
      { headers: { authorization: 'Bearer alice' } },
    );
    const asked = asking.result?.taskId as string;
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId: asked }, { headers: { authorization: 'Bearer alice' } }),
      (reply) => reply.result?.status === 'input_required',
    );
    await rpc2026(
      running.url,
      'tasks/update',
      {
        taskId: asked,
        inputResponses: { confirm: { action: 'accept', content: { confirm: false, note: SECRET_ANSWER } } },
      },
      { headers: { authorization: 'Bearer alice' } },
    );
    await pollUntil(
      () => rpc2026(running.url, 'tasks/get', { taskId: asked }, { headers: { authorization: 'Bearer alice' } }),
      (reply) => reply.result?.status === 'completed',
    );

    await alice.request(
      {
        method: 'tools/call',
        params: {
          name: 'slow_compute',
          arguments: { seconds: 0, label: 'a' },
          _meta: { 'modelcontextprotocol.io/task': { taskId: 'audit-a', keepAlive: 60_000 } },
        },
      },
      CallToolResultSchema,
    );
    await alice.request({ method: 'tasks/delete', params: { taskId: 'audit-a' } }, z.looseObject({}));
    await alice.close();

    const events = audited();
    const principal = 'sub:alice';
    expect(events).toEqual(
      expect.arrayContaining([
        { event: 'created', principal, taskId, tool: 'slow_compute' },
        { event: 'result_read', principal, taskId, tool: 'slow_compute' },
        { event: 'cancelled', principal, taskId: long.task.taskId, tool: 'slow_compute' },
        { event: 'created', principal, taskId: asked, tool: 'confirm_delete' },
        { event: 'answered', principal, taskId: asked, tool: 'confirm_delete' },
        { event: 'result_read', principal, taskId: asked, tool: 'confirm_delete' },
        { event: 'deleted', principal, taskId: expect.stringMatching(/audit-a$/), tool: 'slow_compute' },
      ]),
    );
    for (const line of lines.filter((line) => AUDITED.has(line.data?.event as string))) expect(line.level).toBe('info');
    // The method's own progress may echo its input; the audit lines never carry it.
    const everything = JSON.stringify(lines.filter((line) => AUDITED.has(line.data?.event as string)));
    expect(everything).not.toContain(SECRET_ARGUMENT);
    expect(everything).not.toContain(SECRET_ANSWER);
  });
});
