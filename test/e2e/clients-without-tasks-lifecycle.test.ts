/**
 * Callers without tasks, continued: progress "n of total" in task_status, what a hang-up does
 * in each mode (an inline run stops; a task goes on), the audit trail and rate limits of the
 * companion tools, and the environment variables (read by `readConfig`, honoured by the
 * conformance fixture's own server process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, readConfig } from '../../src/host/config.js';
import { rateCostOf } from '../../src/host/rate-limits.js';
import type { TaskServerOptions } from '../../src/host/task-server.js';
import { Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import type { Logger } from '../../src/tools/logger.js';
import { OpsTools, opsManifest } from '../observe/ops-app.js';
import { startAppProcess } from './processes.js';
import { pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

/** A tool that runs until its signal aborts, and remembers that it did. */
class Holder {
  readonly aborted: string[] = [];
  readonly started: string[] = [];
  @Task({ pollIntervalMs: 100 })
  async hold(label: string, ctx: TaskContext): Promise<string> {
    this.started.push(label);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        this.aborted.push(label);
        resolve();
      });
    });
    return `held ${label}`;
  }
}

const HoldInput = z.strictObject({ label: z.string() });
const holdManifest = () =>
  defineTaskManifest({
    formatVersion: 1,
    tools: [
      ...opsManifest.tools,
      defineTaskTool<Holder, z.output<typeof HoldInput>>({
        name: 'hold',
        taskSupport: 'optional',
        pollIntervalMs: 100,
        result: 'text',
        inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
        input: HoldInput,
        target: { class: Holder, method: 'hold' },
        source: 'test/e2e/clients-without-tasks-lifecycle.test.ts:22:3',
        invoke: (target, args, ctx) => target.hold(args.label, ctx),
      }),
    ],
  });

const lines: { message: string; data?: Record<string, unknown> }[] = [];
const capture = (message: string, data?: Record<string, unknown>) => {
  lines.push({ message, ...(data && { data }) });
};
const logger: Logger = { debug: capture, info: capture, warn: capture, error: capture };

async function serve(holder: Holder, options: Partial<TaskServerOptions> = {}): Promise<RunningServer> {
  return startServer({
    manifest: holdManifest(),
    instances: [new OpsTools(), holder],
    logger,
    ...options,
  });
}

/** A 2026-07-28 `tools/call` without the tasks extension that hangs up after `ms`. */
async function callAndHangUp(url: string, name: string, args: Record<string, unknown>, ms: number): Promise<void> {
  const controller = new AbortController();
  const sent = fetch(url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  }).then((response) => response.text());
  await new Promise((resolve) => setTimeout(resolve, ms));
  controller.abort();
  await sent.catch(() => {});
}

const call = (url: string, name: string, args: Record<string, unknown>) =>
  rpc2026(url, 'tools/call', { name, arguments: args }, { capabilities: {} });

describe('a hang-up, in each mode', () => {
  it("'inline': the client hanging up stops the run", async () => {
    const holder = new Holder();
    const running = await serve(holder, { unawareClients: { mode: 'inline' } });
    try {
      await callAndHangUp(running.url, 'hold', { label: 'inline' }, 300);
      await pollUntil(
        async () => holder.aborted,
        (aborted) => aborted.includes('inline'),
      );
    } finally {
      await running.close();
    }
  });

  it("'auto': the task goes on after a hang-up during the grace wait, reachable through the companion tools", async () => {
    const holder = new Holder();
    const running = await serve(holder, { unawareClients: { graceMs: 5000 } });
    try {
      await callAndHangUp(running.url, 'hold', { label: 'auto' }, 300);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(holder.started).toEqual(['auto']);
      expect(holder.aborted).toEqual([]);
      const created = lines.find((line) => line.data?.event === 'created' && line.data?.tool === 'hold');
      const taskId = created?.data?.taskId as string;
      const status = await call(running.url, 'task_status', { taskId });
      expect(status.result?.structuredContent).toMatchObject({ taskId, status: 'working' });
      await call(running.url, 'task_cancel', { taskId });
      await pollUntil(
        async () => holder.aborted,
        (aborted) => aborted.includes('auto'),
      );
    } finally {
      await running.close();
    }
  });
});

describe('the companion tools on the ops app', () => {
  let running: RunningServer;
  beforeAll(async () => {
    running = await serve(new Holder(), {
      unawareClients: { mode: 'handle' },
      limits: { readsPerSecond: 5, readBurst: 8 },
    });
  });
  afterAll(() => running?.close());

  it('reports numeric progress as "n of total", and the question with its optional field', async () => {
    const handle = (await call(running.url, 'crawl', { pages: 50, pauseMs: 100 })).result?.structuredContent as {
      taskId: string;
    };
    const reported = await pollUntil(
      () => call(running.url, 'task_status', { taskId: handle.taskId }),
      (reply) => (reply.result?.structuredContent as { progress?: unknown } | undefined)?.progress !== undefined,
    );
    const view = reported.result?.structuredContent as { progress: { progress: number; total: number; text: string } };
    const progress = view.progress;
    expect(progress.total).toBe(50);
    expect(progress.text).toBe(`${progress.progress} of 50`);
    expect(JSON.stringify(reported.result?.content)).toContain(`Progress: ${progress.progress} of 50`);
    await call(running.url, 'task_cancel', { taskId: handle.taskId });

    const asking = (await call(running.url, 'publish', {})).result?.structuredContent as { taskId: string };
    const waited = await call(running.url, 'task_wait', { taskId: asking.taskId, seconds: 5 });
    expect(waited.result?.structuredContent).toMatchObject({
      status: 'input_required',
      question: {
        question: 'approval',
        message: 'Publish the report?',
        fields: [
          { name: 'approve', type: 'boolean', required: true, description: 'Publish it?' },
          { name: 'note', type: 'string', required: false, description: 'A note for the log' },
        ],
      },
    });
    const answered = await call(running.url, 'task_answer', {
      taskId: asking.taskId,
      question: 'approval',
      answer: { approve: true, note: 'ok' },
    });
    expect(answered.result?.isError).toBeUndefined();
    await pollUntil(
      () => call(running.url, 'task_result', { taskId: asking.taskId }),
      (reply) => JSON.stringify(reply.result?.content).includes('published: ok'),
    );
  });

  it('audit-logs answers, cancels and result reads as the task methods do', () => {
    const events = lines
      .filter((line) => ['answered', 'cancelled', 'result_read'].includes(line.data?.event as string))
      .map((line) => [line.data?.event, line.data?.tool]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['cancelled', 'crawl'],
        ['answered', 'publish'],
        ['result_read', 'publish'],
      ]),
    );
  });

  it('counts companion calls as task reads, not creations', async () => {
    expect(rateCostOf({ method: 'tools/call', params: { name: 'task_status' } }, new Set(['task_status']))).toEqual({
      kind: 'read',
      points: 1,
    });
    expect(rateCostOf({ method: 'tools/call', params: { name: 'crawl' } }, new Set(['task_status']))).toEqual({
      kind: 'create',
      points: 1,
    });
    // The read budget (burst 8) runs out on task_status calls; creations are still allowed.
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await call(running.url, 'task_status', { taskId: 'x' })).status);
    expect(statuses).toContain(429);
    expect((await call(running.url, 'explode', {})).status).toBe(200);
  });
});

describe('the environment', () => {
  it('reads MCP_TASK_UNAWARE_CLIENTS and MCP_TASK_UNAWARE_GRACE_MS, and names a bad value', () => {
    expect(readConfig({ MCP_TASK_UNAWARE_CLIENTS: 'handle', MCP_TASK_UNAWARE_GRACE_MS: '2500' })).toMatchObject({
      unawareClients: { mode: 'handle', graceMs: 2500 },
    });
    expect(() => readConfig({ MCP_TASK_UNAWARE_CLIENTS: 'sometimes' })).toThrow(
      new ConfigError('MCP_TASK_UNAWARE_CLIENTS', 'sometimes', 'one of auto, handle, inline'),
    );
    expect(() => readConfig({ MCP_TASK_UNAWARE_GRACE_MS: '60000' })).toThrow(/^MCP_TASK_UNAWARE_GRACE_MS="60000"/);
    expect(readConfig({}).unawareClients).toBeUndefined();
  });

  it('the conformance fixture honours them', async () => {
    const app = await startAppProcess('conformance-fixture', 'server', {
      MCP_TASK_UNAWARE_CLIENTS: 'handle',
      MCP_TASK_UNAWARE_GRACE_MS: '0',
    });
    try {
      const reply = await call(app.url as string, 'slow_compute', { seconds: 0, label: 'env' });
      expect(reply.result?.structuredContent).toMatchObject({ status: expect.any(String), pollAfterSeconds: 1 });
      // 'handle' opts the required tools in as well.
      const required = await call(app.url as string, 'failing_job', {});
      expect(required.result?.structuredContent).toMatchObject({ status: 'working' });
    } finally {
      await app.stop();
    }
  }, 60_000);
});
