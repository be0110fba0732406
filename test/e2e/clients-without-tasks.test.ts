/**
 * Callers that cannot receive a task (a 2025-11-25 client without the `tasks` capability, a
 * 2026-07-28 request without the tasks extension) get handles and companion tools, over real
 * HTTP with the real v1 SDK client and raw 2026-07-28 requests. Task-aware callers see exactly
 * what they saw before.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import type { TaskServerOptions } from '../../src/host/task-server.js';
import { Task } from '../../src/index.js';
import { Tasks2025Dialect } from '../../src/protocol/tasks-2025.js';
import { Tasks2026Dialect } from '../../src/protocol/tasks-2026.js';
import { ToolCalls } from '../../src/protocol/tool-calls.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import {
  connectV1,
  openRawSession,
  pollUntil,
  type RunningServer,
  rpc2026,
  startServer,
  WITH_TASKS,
} from './support.js';

const COMPANIONS = ['task_status', 'task_wait', 'task_result', 'task_answer', 'task_cancel'];
const GRACE_MS = 1500;

interface Handle {
  taskId: string;
  status: string;
  statusMessage?: string;
  pollAfterSeconds: number;
  question?: { question: string; message: string; fields: { name: string; type: string; required: boolean }[] };
  progress?: { progress: number; total?: number; text: string };
}

const structured = (result: unknown): Handle => (result as { structuredContent: Handle }).structuredContent;
const textOf = (result: unknown): string =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? []).map((block) => block.text ?? '').join('');

function fixture(extra: Partial<TaskServerOptions> = {}): Promise<RunningServer> {
  return startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    unawareClients: { graceMs: GRACE_MS, keepAliveMs: 100 },
    ...extra,
  });
}

describe('a 2025-11-25 client without the tasks capability (v1 SDK)', () => {
  let running: RunningServer;
  let client: Client;

  beforeAll(async () => {
    running = await fixture();
    client = await connectV1(running.url);
  });
  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('lists the companion tools, typed, without task support', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(COMPANIONS));
    for (const name of COMPANIONS) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool?.execution).toBeUndefined();
      expect(tool?.description?.length).toBeGreaterThan(40);
      expect(tool?.inputSchema.required).toContain('taskId');
    }
    expect(tools.find((tool) => tool.name === 'task_wait')?.outputSchema?.required).toEqual([
      'taskId',
      'status',
      'pollAfterSeconds',
    ]);
    // A required tool still refuses plain calls by default, and says so in its listing.
    expect(tools.find((tool) => tool.name === 'failing_job')?.execution?.taskSupport).toBe('required');
  });

  it('answers a quick task inline with its real result under auto', async () => {
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'quick' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Computed quick in 0s' }]);
    expect(result.structuredContent).toBeUndefined();
  });

  it('answers a long task with a handle within the grace time, then follows it to its result', async () => {
    const started = Date.now();
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 3, label: 'long' } });
    expect(Date.now() - started).toBeLessThan(GRACE_MS + 1000);
    const handle = structured(result);
    expect(handle).toMatchObject({ status: 'working', pollAfterSeconds: 1 });
    expect(handle.taskId).toMatch(/^[\w-]{22}$/);
    expect(textOf(result)).toContain(`task_wait with {"taskId":"${handle.taskId}"}`);

    const early = await client.callTool({ name: 'task_result', arguments: { taskId: handle.taskId } });
    expect(structured(early).status).toBe('working');
    let waited = await client.callTool({ name: 'task_wait', arguments: { taskId: handle.taskId, seconds: 10 } });
    while (structured(waited).status === 'working') {
      waited = await client.callTool({ name: 'task_wait', arguments: { taskId: handle.taskId } });
    }
    expect(structured(waited).status).toBe('completed');
    expect(textOf(waited)).toContain('task_result');
    const final = await client.callTool({ name: 'task_result', arguments: { taskId: handle.taskId } });
    expect(final.content).toEqual([{ type: 'text', text: 'Computed long in 3s' }]);
  });

  it('task_status reports a running task, task_cancel stops it', async () => {
    const handle = structured(
      await client.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'cancel-me' } }),
    );
    const status = structured(await client.callTool({ name: 'task_status', arguments: { taskId: handle.taskId } }));
    expect(status).toMatchObject({ taskId: handle.taskId, status: 'working', statusMessage: 'computing cancel-me' });
    const cancelled = await client.callTool({ name: 'task_cancel', arguments: { taskId: handle.taskId } });
    expect(structured(cancelled).status).toBe('cancelled');
    const again = await client.callTool({ name: 'task_cancel', arguments: { taskId: handle.taskId } });
    expect(structured(again).status).toBe('cancelled');
    const result = await client.callTool({ name: 'task_result', arguments: { taskId: handle.taskId } });
    expect(textOf(result)).toContain('cancelled');
  });

  it('describes a question in the handle and takes its answer through task_answer, refusing a wrong one', async () => {
    // counted_step has an outputSchema: the client checks the handle against the listed one.
    const result = await client.callTool({ name: 'counted_step', arguments: { label: 'v1-answer' } });
    const handle = structured(result);
    expect(handle.status).toBe('input_required');
    expect(handle.question).toMatchObject({
      question: 'go',
      message: 'Go on?',
      fields: [{ name: 'go', type: 'boolean', required: true }],
    });
    expect(textOf(result)).toContain('task_answer');

    const wrong = await client.callTool({
      name: 'task_answer',
      arguments: { taskId: handle.taskId, question: 'go', answer: { go: 'yes' } },
    });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/field 'go' expects true or false/);
    expect(
      structured(await client.callTool({ name: 'task_status', arguments: { taskId: handle.taskId } })).status,
    ).toBe('input_required');
    const unknown = await client.callTool({
      name: 'task_answer',
      arguments: { taskId: handle.taskId, question: 'nope', answer: {} },
    });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("open questions: 'go'");

    const answered = await client.callTool({
      name: 'task_answer',
      arguments: { taskId: handle.taskId, question: 'go', answer: { go: true } },
    });
    expect(answered.isError).toBeFalsy();
    let waited = structured(await client.callTool({ name: 'task_wait', arguments: { taskId: handle.taskId } }));
    while (waited.status === 'working') {
      waited = structured(await client.callTool({ name: 'task_wait', arguments: { taskId: handle.taskId } }));
    }
    expect(waited.status).toBe('completed');
    const final = await client.callTool({ name: 'task_result', arguments: { taskId: handle.taskId } });
    expect(final.structuredContent).toMatchObject({ stepValue: 1 });
  });

  it('bounds the arguments of the companion tools with -32602 naming the field', async () => {
    await expect(client.callTool({ name: 'task_status', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('taskId'),
    });
    const handle = structured(await client.callTool({ name: 'slow_compute', arguments: { seconds: 5, label: 'b' } }));
    const taskId = handle.taskId;
    for (const seconds of [-1, 'ten']) {
      await expect(client.callTool({ name: 'task_wait', arguments: { taskId, seconds } })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('seconds'),
      });
    }
    await expect(
      client.callTool({ name: 'task_answer', arguments: { taskId, question: 'go', answer: 'yes' } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('answer') });
  });

  it('an unknown task id is the same not-found as tasks/get', async () => {
    const error = await client.callTool({ name: 'task_status', arguments: { taskId: 'no-such-task' } }).catch((e) => e);
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('Task not found') });
  });

  it('still serves a call that asks for a task as a task', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 't' }, task: {} } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
  });

  it('keeps a call that asked for progress alive while it waits', async () => {
    const updates: number[] = [];
    await client.callTool({ name: 'slow_compute', arguments: { seconds: 1, label: 'alive' } }, CallToolResultSchema, {
      onprogress: (progress) => updates.push(progress.progress),
    });
    expect(updates.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < updates.length; i++) expect(updates[i]).toBeGreaterThan(updates[i - 1] as number);
  });
});

describe('a 2025-11-25 client without tasks that declared elicitation', () => {
  let running: RunningServer;
  let client: Client;
  const asked: string[] = [];

  beforeAll(async () => {
    running = await fixture();
    client = await connectV1(running.url, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
      asked.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
  });
  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('gets the question as elicitation/create during the grace wait, and the result inline', async () => {
    const result = await client.callTool({ name: 'confirm_delete', arguments: { filename: 'report.txt' } });
    expect(asked).toEqual(['Delete report.txt?']);
    expect(result.content).toEqual([{ type: 'text', text: 'Deleted report.txt' }]);
  });
});

describe('a 2025-11-25 client without tasks whose person takes longer than the wait to answer', () => {
  let running: RunningServer;
  let slow: Client;
  let asked = 0;
  // A person reads the dialog and clicks: longer than the grace time and the task_wait below.
  const ANSWER_AFTER_MS = GRACE_MS + 1000;

  beforeAll(async () => {
    running = await fixture();
    slow = await connectV1(running.url, { capabilities: { elicitation: {} } });
    slow.setRequestHandler(ElicitRequestSchema, async (): Promise<ElicitResult> => {
      asked++;
      await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS));
      return { action: 'accept', content: { confirm: true } };
    });
  });
  afterAll(async () => {
    await slow?.close();
    await running?.close();
  });

  const statusOf = async (taskId: string) =>
    structured(await slow.callTool({ name: 'task_status', arguments: { taskId } })).status;

  it('the grace time does not withdraw a dialog that is out: the late answer reaches the task', async () => {
    asked = 0;
    const started = Date.now();
    const reply = await slow.callTool({ name: 'confirm_delete', arguments: { filename: 'late.txt' } });
    // The call stayed open for the answer, beyond the grace time.
    expect(Date.now() - started).toBeGreaterThanOrEqual(ANSWER_AFTER_MS);
    expect(asked).toBe(1);
    if (textOf(reply) !== 'Deleted late.txt') {
      const taskId = structured(reply).taskId;
      await pollUntil(
        () => statusOf(taskId),
        (status) => status === 'completed',
      );
    }
  });

  it("task_wait's seconds do not withdraw a dialog that is out either", async () => {
    asked = 0;
    // Started by a client that cannot be asked, so the question waits for the slow person.
    const other = await connectV1(running.url, {});
    const handle = structured(await other.callTool({ name: 'confirm_delete', arguments: { filename: 'wait.txt' } }));
    await other.close();
    expect(handle.status).toBe('input_required');
    const waited = structured(
      await slow.callTool({ name: 'task_wait', arguments: { taskId: handle.taskId, seconds: 1 } }),
    );
    expect(asked).toBe(1);
    expect(waited.status).not.toBe('input_required');
    await pollUntil(
      () => statusOf(handle.taskId),
      (status) => status === 'completed',
    );
  });
});

describe('a 2025-11-25 client without tasks that declared only URL-mode elicitation', () => {
  let running: RunningServer;
  beforeAll(async () => {
    running = await fixture();
  });
  afterAll(() => running?.close());

  it('is sent no form elicitation: the question is in the handle, for task_answer', async () => {
    const session = await openRawSession(running.url, { capabilities: { elicitation: { url: {} } } });
    const text = await fetch(running.url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'confirm_delete', arguments: { filename: 'url-only.txt' } },
      }),
    }).then((response) => response.text());
    expect(text).toContain('task_answer');
    expect(text).not.toContain('elicitation/create');
  });
});

describe('a 2026-07-28 request without the tasks extension', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await fixture();
  });
  afterAll(() => running?.close());

  const call = (name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = {}, more = {}) =>
    rpc2026(running.url, 'tools/call', { name, arguments: args, ...more }, { capabilities });

  it('lists the companion tools, and a handle-capable outputSchema that admits the handle', async () => {
    const reply = await rpc2026(running.url, 'tools/list', {}, { capabilities: {} });
    const tools = reply.result?.tools as { name: string; outputSchema?: Record<string, unknown> }[];
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(COMPANIONS));
    const counted = tools.find((tool) => tool.name === 'counted_step');
    expect(counted?.outputSchema).toMatchObject({ type: 'object', anyOf: [expect.any(Object), expect.any(Object)] });
  });

  it('answers a long task with a handle and follows it with task_wait and task_result', async () => {
    const reply = await call('slow_compute', { seconds: 2, label: 'c' });
    const handle = structured(reply.result);
    expect(handle.status).toBe('working');
    let waited = structured((await call('task_wait', { taskId: handle.taskId, seconds: 5 })).result);
    while (waited.status === 'working') {
      waited = structured((await call('task_wait', { taskId: handle.taskId })).result);
    }
    expect(waited.status).toBe('completed');
    const final = await call('task_result', { taskId: handle.taskId });
    expect(final.result?.content).toEqual([{ type: 'text', text: 'Computed c in 2s' }]);
  });

  it('keeps -32021 for a required tool by default', async () => {
    const reply = await call('failing_job', {});
    expect(reply.error?.code).toBe(-32021);
  });

  it('with elicitation declared, asks as a multi-round-trip result and continues the task with the answer', async () => {
    const first = await call('confirm_delete', { filename: 'a.txt' }, { elicitation: {} });
    expect(first.result?.resultType).toBe('input_required');
    const requests = first.result?.inputRequests as Record<string, { method: string }>;
    const key = Object.keys(requests)[0] as string;
    expect(requests[key]?.method).toBe('elicitation/create');
    expect(typeof first.result?.requestState).toBe('string');
    const second = await call(
      'confirm_delete',
      { filename: 'a.txt' },
      { elicitation: {} },
      {
        inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
        requestState: first.result?.requestState,
      },
    );
    expect(second.result?.content).toEqual([{ type: 'text', text: 'Deleted a.txt' }]);
  });

  it('with elicitation declared, task_wait hands the question back and takes the answer on its retry', async () => {
    const handle = structured((await call('counted_step', { label: 'c26' }, {}, {})).result);
    expect(handle.status).toBe('input_required');
    const asking = await call('task_wait', { taskId: handle.taskId, seconds: 1 }, { elicitation: {} });
    expect(asking.result?.resultType).toBe('input_required');
    const key = Object.keys(asking.result?.inputRequests as object)[0] as string;
    const answered = await call(
      'task_wait',
      { taskId: handle.taskId, seconds: 10 },
      { elicitation: {} },
      { inputResponses: { [key]: { action: 'accept', content: { go: true } } } },
    );
    expect(structured(answered.result).status).toBe('completed');
  });

  it('with only URL-mode elicitation declared, gets no form round but the question for task_answer', async () => {
    const reply = await call('confirm_delete', { filename: 'url.txt' }, { elicitation: { url: {} } });
    expect(reply.result?.resultType).not.toBe('input_required');
    const handle = structured(reply.result);
    expect(handle.status).toBe('input_required');
    expect(handle.question?.fields).toEqual([expect.objectContaining({ name: 'confirm' })]);
    await call('task_cancel', { taskId: handle.taskId });
  });

  it('without elicitation, describes the question and takes it through task_answer', async () => {
    const handle = structured((await call('confirm_delete', { filename: 'b.txt' })).result);
    expect(handle.status).toBe('input_required');
    expect(handle.question?.fields).toEqual([
      expect.objectContaining({ name: 'confirm', type: 'boolean', required: true }),
    ]);
    const answered = await call('task_answer', {
      taskId: handle.taskId,
      question: handle.question?.question,
      answer: { confirm: true },
    });
    expect(answered.result?.isError).toBeUndefined();
    let waited = structured((await call('task_wait', { taskId: handle.taskId })).result);
    while (waited.status === 'working')
      waited = structured((await call('task_wait', { taskId: handle.taskId })).result);
    expect((await call('task_result', { taskId: handle.taskId })).result?.content).toEqual([
      { type: 'text', text: 'Deleted b.txt' },
    ]);
  });
});

describe('task-aware callers see what they saw before', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await fixture();
  });
  afterAll(() => running?.close());

  it('2025-11-25 with the tasks capability: the same tools/list, no companion tools', async () => {
    const client = await connectV1(running.url, { capabilities: { tasks: {} } });
    try {
      const calls = new ToolCalls(running.server.engine, running.server.registry);
      const expected = new Tasks2025Dialect(calls).listTools();
      const listed = await client.request({ method: 'tools/list', params: {} }, (await import('zod')).z.any());
      expect(listed).toEqual(JSON.parse(JSON.stringify(expected)));
      await expect(client.callTool({ name: 'task_status', arguments: { taskId: 'x' } })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Unknown tool'),
      });
    } finally {
      await client.close();
    }
  });

  it('2026-07-28 with the tasks extension: the same tools/list, and a task', async () => {
    const calls = new ToolCalls(running.server.engine, running.server.registry);
    const expected = new Tasks2026Dialect(calls).listTools();
    const reply = await rpc2026(running.url, 'tools/list', {}, { capabilities: WITH_TASKS });
    expect(reply.result?.tools).toEqual(JSON.parse(JSON.stringify(expected.tools)));
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'x' } },
      { capabilities: WITH_TASKS },
    );
    expect(created.result?.resultType).toBe('task');
    // The companion tools are not theirs to call either.
    const companion = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_status', arguments: { taskId: 'x' } },
      { capabilities: WITH_TASKS },
    );
    expect(companion.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool') });
  });
});

describe('server-wide modes', () => {
  it("'handle' answers at once, also for required tools, which are listed as optional on 2025-11-25", async () => {
    const running = await fixture({ unawareClients: { mode: 'handle', graceMs: GRACE_MS } });
    const client = await connectV1(running.url);
    try {
      const { tools } = await client.listTools();
      expect(tools.find((tool) => tool.name === 'failing_job')?.execution?.taskSupport).toBe('optional');
      const quick = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'h' } });
      expect(structured(quick).taskId).toBeDefined();
      const failing = structured(await client.callTool({ name: 'failing_job', arguments: {} }));
      let waited = structured(await client.callTool({ name: 'task_wait', arguments: { taskId: failing.taskId } }));
      while (waited.status === 'working') {
        waited = structured(await client.callTool({ name: 'task_wait', arguments: { taskId: failing.taskId } }));
      }
      expect(waited.status).toBe('failed');
      const result = await client.callTool({ name: 'task_result', arguments: { taskId: failing.taskId } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('failed on purpose');
    } finally {
      await client.close();
      await running.close();
    }
  });

  it("'inline' runs the call inside the request, as before, with keep-alive progress", async () => {
    const running = await fixture({ unawareClients: { mode: 'inline', keepAliveMs: 100 } });
    const client = await connectV1(running.url);
    try {
      const updates: number[] = [];
      const result = await client.callTool(
        { name: 'slow_compute', arguments: { seconds: 1, label: 'i' } },
        CallToolResultSchema,
        { onprogress: (progress) => updates.push(progress.progress) },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'Computed i in 1s' }]);
      expect(updates.length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
      await running.close();
    }
  });
});

/** A task tool that needs the client to declare `sampling`. */
class Sampler {
  readonly ran: string[] = [];
  @Task({ pollIntervalMs: 100 })
  async summarize(label: string): Promise<string> {
    this.ran.push(label);
    return `summarized ${label}`;
  }
}

const Input = z.strictObject({ label: z.string() });
const manifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<Sampler, z.output<typeof Input>>({
      name: 'summarize',
      taskSupport: 'optional',
      requiresClientCapabilities: ['sampling'],
      pollIntervalMs: 100,
      result: 'text',
      inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      input: Input,
      target: { class: Sampler, method: 'summarize' },
      source: 'test/e2e/clients-without-tasks.test.ts',
      invoke: (target, args) => target.summarize(args.label),
    }),
  ],
});

describe('a task tool that needs a client capability', () => {
  const sampler = new Sampler();
  let running: RunningServer;
  beforeAll(async () => {
    running = await startServer({ manifest, instances: [sampler] });
  });
  afterAll(() => running?.close());

  it('2026-07-28: the tool refuses a request without the capability with -32021, with or without the tasks extension', async () => {
    const aware = await rpc2026(
      running.url,
      'tools/call',
      { name: 'summarize', arguments: { label: 'aware' } },
      { capabilities: WITH_TASKS },
    );
    expect(aware.error?.code).toBe(-32021);
    const unaware = await rpc2026(
      running.url,
      'tools/call',
      { name: 'summarize', arguments: { label: 'unaware' } },
      { capabilities: {} },
    );
    expect(unaware.error?.code, JSON.stringify(unaware.result)).toBe(-32021);
    expect(sampler.ran).toEqual([]);
  });

  it('2025-11-25: a session without tasks is refused with -32021 like one with them, and no task starts', async () => {
    const client = await connectV1(running.url, {});
    const outcome = await client.callTool({ name: 'summarize', arguments: { label: 'legacy' } }).then(
      (result) => ({ result }),
      (error: { code: number }) => ({ code: error.code }),
    );
    expect(outcome).toEqual({ code: -32021 });
    expect(sampler.ran).toEqual([]);
    await client.close();
  });
});
