/**
 * A task's whole life in the logs, asserted line by line with a captured logger: created,
 * started, progress (debug), input requested, answered, completed with its duration, failed
 * with its stack, cancelled, and a result that breaks its declared type; and the policies' lines
 * (a timed-out attempt, scheduled retries, a priority, a repeated idempotent create, a wait for
 * a principal's share), each with its fields and never the arguments. Real v1 client, real
 * HTTP server, in-process runtime. The BullMQ side (server and worker processes) is in
 * `operator-routes.test.ts`.
 */
import { Writable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleLogger, loggerFromPino } from '../../src/observe/log.js';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { captureLogger, OpsTools, opsManifest, PolicyTools, policyManifest, tokenAuth } from './ops-app.js';

const captured = captureLogger();
let running: RunningServer;
let client: Client;

beforeAll(async () => {
  running = await startServer({
    manifest: opsManifest,
    instances: [new OpsTools()],
    logger: captured.logger,
    http: { auth: tokenAuth({ 'token-ann': 'ann' }) },
  });
  client = await connectV1(running.url, { token: 'token-ann', capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: 'accept',
    content: { approve: true, note: 'secret note' },
  }));
});

afterAll(async () => {
  await client?.close();
  await running?.close();
});

async function startTask(name: string, args: Record<string, unknown> = {}): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

const events = (taskId: string) => captured.of(taskId).map((line) => line.data.event);

describe('lifecycle logs', () => {
  it('follow a task from creation through progress to completion, one line per event', async () => {
    const taskId = await startTask('crawl', { pages: 2, pauseMs: 10 });
    await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('completed'),
    );
    // The caller's reading of the result is the audit trail's last line.
    expect(events(taskId)).toEqual(['created', 'started', 'progress', 'progress', 'completed', 'result_read']);
    for (const line of captured.of(taskId)) {
      expect(line.data).toMatchObject({ taskId, tool: 'crawl', principal: 'sub:ann', role: 'server' });
      // Never the arguments.
      expect(JSON.stringify(line.data)).not.toContain('pauseMs');
    }
    const [created, started, progress, , completed] = captured.of(taskId);
    expect(created).toMatchObject({ level: 'info', message: 'task created' });
    // The version the task was accepted with: the hash of the tool's schemas (none declared).
    expect(created?.data.toolVersion).toMatch(/^[0-9a-f]{12}$/);
    expect(started?.message).toMatch(/^task started on .+:\d+$/);
    expect(started?.data.queueWaitMs).toBeTypeOf('number');
    expect(progress).toMatchObject({
      level: 'debug',
      data: { statusMessage: 'page 1 of 2', progress: 1, total: 2 },
    });
    expect(completed).toMatchObject({ level: 'info', message: 'task completed' });
    expect(completed?.data.durationMs).toBeTypeOf('number');
  });

  it('log a question asked and answered, without the answer', async () => {
    const taskId = await startTask('publish');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'published: secret note' }]);
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('completed'),
    );
    expect(events(taskId)).toEqual(['created', 'started', 'input_requested', 'answered', 'completed', 'result_read']);
    expect(captured.of(taskId)[2]).toMatchObject({ message: 'task input requested', data: { key: 'approval' } });
    expect(captured.of(taskId)[3]).toMatchObject({ message: 'task answered', data: { keys: ['approval'] } });
    expect(JSON.stringify(captured.of(taskId))).not.toContain('secret note');
  });

  it('log a failure at error level with the stack of what the method threw', async () => {
    const taskId = await startTask('explode');
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('failed'),
    );
    const failed = captured.of(taskId).find((line) => line.data.event === 'failed');
    expect(failed).toMatchObject({
      level: 'error',
      message: 'task failed',
      data: { kind: 'tool_error', error: 'kaboom', tool: 'explode' },
    });
    const stack = (failed?.data.err as Error | undefined)?.stack ?? '';
    expect(stack).toContain('kaboom');
    expect(stack).toContain('ops-app.ts');
  });

  it('log a result that does not match its declared type, naming the tool and the problem', async () => {
    const taskId = await startTask('lie');
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('failed'),
    );
    expect(events(taskId)).toEqual(['created', 'started', 'output_invalid', 'failed']);
    expect(captured.of(taskId)[2]).toMatchObject({
      level: 'error',
      message: 'task output does not match its schema',
      data: { tool: 'lie', detail: 'expected a string, got a number' },
    });
  });

  it('log a cancel, and the run stopping because of it', async () => {
    const taskId = await startTask('crawl', { pages: 1000, pauseMs: 50 });
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('progress'),
    );
    await client.experimental.tasks.cancelTask(taskId);
    await pollUntil(
      async () => events(taskId),
      (seen) => seen.includes('aborted'),
    );
    expect(events(taskId).filter((event) => event !== 'progress')).toEqual([
      'created',
      'started',
      'cancelled',
      'aborted',
    ]);
  });
});

describe('the default logger', () => {
  it('writes pino JSON lines with the stack of an `err` field, at the level asked for', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = loggerFromPino(pino({ level: 'info' }, sink));
    logger.debug('not shown');
    logger.error('task failed', { taskId: 't1', err: new Error('kaboom') });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level: 50, msg: 'task failed', taskId: 't1', err: { message: 'kaboom' } });
    expect(line.err.stack).toContain('kaboom');
  });

  it('keeps createConsoleLogger working as a Logger', () => {
    const logger = createConsoleLogger('silent');
    expect(() => logger.info('quiet', { a: 1 })).not.toThrow();
  });
});

describe('lifecycle logs of the policies', () => {
  const policyLines = captureLogger();
  let policies: RunningServer;
  let cy: Client;

  beforeAll(async () => {
    policies = await startServer({
      manifest: policyManifest,
      instances: [new PolicyTools()],
      logger: policyLines.logger,
      http: { auth: tokenAuth({ 'token-cy': 'cy' }) },
      limits: { maxRunningTasksPerPrincipal: 1 },
    });
    cy = await connectV1(policies.url, { token: 'token-cy' });
  });
  afterAll(async () => {
    await cy?.close();
    await policies?.close();
  });

  const create = async (name: string, args: Record<string, unknown>) =>
    (await cy.request({ method: 'tools/call', params: { name, arguments: args, task: {} } }, CreateTaskResultSchema))
      .task.taskId;
  const line = (taskId: string, event: string) => policyLines.of(taskId).find((each) => each.data.event === event);
  const common = (taskId: string, tool: string) => ({ taskId, tool, principal: 'sub:cy', role: 'server' });

  it('say a timed-out attempt and each scheduled retry, with attempt, attempts, delay and reason', async () => {
    const taskId = await create('flaky', { label: 'label-secret-1' });
    await cy.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await pollUntil(
      async () => policyLines.of(taskId).map((each) => each.data.event),
      (seen) => seen.includes('completed'),
    );
    expect(line(taskId, 'timed_out')).toEqual({
      level: 'warn',
      message: 'task attempt 1 of 3 timed out',
      data: {
        event: 'timed_out',
        ...common(taskId, 'flaky'),
        attempt: 1,
        attempts: 3,
        timeoutMs: 300,
        reason: 'timed out after 300 ms',
      },
    });
    const retries = policyLines.of(taskId).filter((each) => each.data.event === 'retry_scheduled');
    expect(retries.map((each) => [each.level, each.message, each.data])).toEqual([
      [
        'warn',
        'task attempt 1 of 3 failed; retrying',
        {
          event: 'retry_scheduled',
          ...common(taskId, 'flaky'),
          attempt: 1,
          attempts: 3,
          delayMs: 50,
          reason: 'timed out after 300 ms',
        },
      ],
      [
        'warn',
        'task attempt 2 of 3 failed; retrying',
        {
          event: 'retry_scheduled',
          ...common(taskId, 'flaky'),
          attempt: 2,
          attempts: 3,
          delayMs: 50,
          reason: 'ECONNRESET',
        },
      ],
    ]);
    expect(JSON.stringify(policyLines.of(taskId))).not.toContain('label-secret-1');
  });

  it('say a priority on the created line, and each repeated idempotent create', async () => {
    const taskId = await create('lookup', { term: 'term-secret-2' });
    expect(await create('lookup', { term: 'term-secret-2' })).toBe(taskId);
    expect(line(taskId, 'created')).toMatchObject({
      level: 'info',
      message: 'task created',
      data: { event: 'created', ...common(taskId, 'lookup'), priority: 7 },
    });
    const hit = line(taskId, 'idempotent_hit');
    expect(hit).toEqual({
      level: 'info',
      message: 'task returned for a repeated idempotent create',
      data: {
        event: 'idempotent_hit',
        ...common(taskId, 'lookup'),
        idempotentHit: true,
        status: expect.stringMatching(/^(working|completed)$/),
      },
    });
    expect(JSON.stringify(policyLines.of(taskId))).not.toContain('term-secret-2');
  });

  it("say a task waits for its principal's share, once, with reason, running and limit", async () => {
    const first = await create('hold', { ms: 400 });
    const second = await create('hold', { ms: 0 });
    await cy.experimental.tasks.getTaskResult(second, CallToolResultSchema);
    const waits = policyLines.of(second).filter((each) => each.data.event === 'waiting');
    expect(waits).toEqual([
      {
        level: 'info',
        message: 'task waits (principal_share)',
        data: { event: 'waiting', ...common(second, 'hold'), reason: 'principal_share', running: 1, limit: 1 },
      },
    ]);
    expect(line(first, 'waiting')).toBeUndefined();
  });
});
