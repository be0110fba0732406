/**
 * Clients that cannot receive tasks, none of them ours, drive `@Task` tools with plain tool
 * calls: the v1 SDK client on 2025-11-25 with no `tasks` capability, the v2 client on 2026-07-28
 * without the tasks extension, and the Python `mcp` client on both revisions. Each starts a long
 * task and gets a handle once the grace time is up, follows it with `task_wait` to its result
 * (`task_result`), answers a question with `task_answer` (and through elicitation where it
 * declares it), and cancels one. A quick task still answers inline. Callers that speak tasks
 * see the tool list they always saw. One principal never reaches another's handle.
 *
 * The long task (`hold_job`) would work for 30 s; the test lets it finish once it has seen
 * what it checks, so nothing waits on a clock but the server's own grace time.
 *
 * The Python client lives in .venv/python-client (`npm run setup:python`; .ci/run installs
 * it). Outside CI, without it, its cases are skipped with a note; in CI they fail.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLER_KINDS, type CallerKind, openCaller, type PlainCaller, pythonClientInstalled } from './plain-callers.js';
import { connectV1, rpc2026, WITH_TASKS } from './support.js';
import { taskManifest } from './unaware-app/src/__generated__/tasks.generated.js';
import {
  COMPANIONS,
  callView,
  resultOf,
  startUnawareServer,
  TERMINAL,
  textOf,
  type UnawareServer,
  viewOf,
  waitUntil,
} from './unaware-support.js';

/** Short, so the suite is quick; the defaults have their own test (unaware-defaults.test.ts). */
const GRACE_MS = 1000;
/** How long `hold_job` would work if the test never let it go. */
const LONG_TASK_SECONDS = 30;

const pythonInstalled = pythonClientInstalled();
const inCi = process.env.CI === 'true';
const kinds = CALLER_KINDS.filter((kind) => pythonInstalled || !kind.startsWith('python'));

let server: UnawareServer;

beforeAll(async () => {
  server = await startUnawareServer({ unawareClients: { graceMs: GRACE_MS } });
});

afterAll(() => server?.close());

let labels = 0;
const label = (what: string) => `${what}-${++labels}`;

/** Whether the `hold_job` run is still going (its end has not been reported). */
async function stillRunning(holdLabel: string): Promise<boolean> {
  return Promise.race([server.tools.ended(holdLabel).then(() => false), Promise.resolve(true)]);
}

if (!pythonInstalled) {
  describe('the Python mcp client', () => {
    const why = 'is not installed in .venv/python-client: run `npm run setup:python`';
    if (inCi) {
      it('is installed (.ci/run installs it)', () => {
        throw new Error(`the Python mcp client ${why}`);
      });
    } else {
      it.skip(`${why} to run its cases`, () => {});
    }
  });
}

describe.concurrent.each(kinds)('%s, declaring neither tasks nor elicitation', (kind: CallerKind) => {
  let caller: PlainCaller;

  beforeAll(async () => {
    caller = await openCaller(kind, server.url);
  });

  afterAll(() => caller?.close());

  it('lists the companion tools beside the app tools, each described for a model and typed', async () => {
    const tools = await caller.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['hold_job', 'quick_sum', 'triage_file', ...COMPANIONS]));
    for (const name of COMPANIONS) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool?.description?.length, `${name} description`).toBeGreaterThan(40);
      expect(tool?.inputSchema.properties?.taskId, `${name} takes taskId`).toBeDefined();
      expect(tool?.inputSchema.required).toContain('taskId');
    }
    const wait = tools.find((tool) => tool.name === 'task_wait');
    expect(wait?.inputSchema.properties?.seconds).toBeDefined();
    // A model must learn the cap from the listing: waits stay well under host request timeouts.
    expect(wait?.description).toContain('25');
    expect(tools.find((tool) => tool.name === 'task_status')?.outputSchema).toBeDefined();
    const answer = tools.find((tool) => tool.name === 'task_answer');
    expect(answer?.inputSchema.required).toEqual(expect.arrayContaining(['taskId', 'question', 'answer']));
  });

  it('gets a quick task’s result inline, as before, with or without an outputSchema', async () => {
    const result = resultOf(await caller.call('quick_sum', { a: 2, b: 3 }), 'quick_sum');
    expect(textOf(result)).toBe('2 + 3 = 5');
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent?.taskId).toBeUndefined();

    // A tool with an outputSchema too: its inline result passes the schema the client listed.
    const job = label(`inline-${kind}`);
    server.tools.release(job);
    const inline = resultOf(await caller.call('hold_job', { label: job, seconds: LONG_TASK_SECONDS }), 'hold_job');
    expect(inline.structuredContent).toEqual({ label: job, released: true });
  });

  it('gets a handle for a long task after the grace time, follows it with task_wait and reads task_result', async () => {
    const job = label(`follow-${kind}`);
    const startedAt = Date.now();
    // The client checks structuredContent against hold_job's listed outputSchema: the handle must pass it.
    const handle = viewOf(
      resultOf(await caller.call('hold_job', { label: job, seconds: LONG_TASK_SECONDS }), 'hold_job'),
      'hold_job',
    );
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(GRACE_MS - 50);
    await server.tools.started(job);
    expect(await stillRunning(job)).toBe(true);
    expect(handle.status).toBe('working');
    expect(handle.pollAfterSeconds).toBeGreaterThan(0);
    const { taskId } = handle;

    // A bounded wait answers like task_status once its time is up, the task still working.
    const waitedFrom = Date.now();
    const bounded = await callView(caller, 'task_wait', { taskId, seconds: 1 });
    expect(bounded).toMatchObject({ taskId, status: 'working' });
    expect(Date.now() - waitedFrom).toBeGreaterThanOrEqual(900);

    // Not done yet: task_result reports where the task is instead of a result.
    expect((await callView(caller, 'task_result', { taskId })).status).toBe('working');

    const waiting = callView(caller, 'task_wait', { taskId });
    server.tools.release(job);
    const done = TERMINAL.has((await waiting).status) ? await waiting : await waitUntil(caller, taskId);
    expect(done).toMatchObject({ taskId, status: 'completed' });
    expect(await server.tools.ended(job)).toBe('released');

    const result = resultOf(await caller.call('task_result', { taskId }), 'task_result');
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({ label: job, released: true });
    expect(JSON.parse(textOf(result))).toEqual({ label: job, released: true });
  });

  it('names the tool to call next, with the task id, in the handle text', async () => {
    const job = label(`text-${kind}`);
    const result = resultOf(await caller.call('hold_job', { label: job, seconds: LONG_TASK_SECONDS }), 'hold_job');
    const { taskId } = viewOf(result, 'hold_job');
    expect(textOf(result)).toContain('task_wait');
    expect(textOf(result)).toContain(taskId);
    expect((await callView(caller, 'task_cancel', { taskId })).status).toBe('cancelled');
  });

  it('answers a question with task_answer; a wrong answer names the field and the question stays open', async () => {
    const filename = `${label(`answer-${kind}`)}.txt`;
    const handle = viewOf(resultOf(await caller.call('triage_file', { filename }), 'triage_file'), 'triage_file');
    const { taskId } = handle;
    const asking = await waitUntil(caller, taskId, (view) => view.status === 'input_required' && !!view.question);
    const question = asking.question!;
    expect(question.message).toBe(`What should happen to ${filename}?`);
    expect(question.fields).toEqual([
      expect.objectContaining({ name: 'action', type: 'string', allowed: ['keep', 'archive', 'delete'] }),
    ]);

    const wrong = resultOf(
      await caller.call('task_answer', { taskId, question: question.question, answer: { action: 'shred' } }),
      'task_answer (wrong)',
    );
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toContain('action');
    expect(textOf(wrong)).toMatch(/keep.*archive.*delete/);
    const stillAsking = await callView(caller, 'task_status', { taskId });
    expect(stillAsking.status).toBe('input_required');
    expect(stillAsking.question?.question).toBe(question.question);

    const accepted = resultOf(
      await caller.call('task_answer', { taskId, question: question.question, answer: { action: 'archive' } }),
      'task_answer',
    );
    expect(accepted.isError ?? false, textOf(accepted)).toBe(false);
    expect(await waitUntil(caller, taskId)).toMatchObject({ status: 'completed' });
    expect(textOf(resultOf(await caller.call('task_result', { taskId }), 'task_result'))).toBe(`${filename}: archive`);
  });

  it('cancels a long task with task_cancel; the run stops', async () => {
    const job = label(`cancel-${kind}`);
    const { taskId, status } = viewOf(
      resultOf(await caller.call('hold_job', { label: job, seconds: LONG_TASK_SECONDS }), 'hold_job'),
      'hold_job',
    );
    expect(status).toBe('working');
    expect((await callView(caller, 'task_cancel', { taskId })).status).toBe('cancelled');
    expect(await server.tools.ended(job)).toBe('stopped');
    expect((await callView(caller, 'task_status', { taskId })).status).toBe('cancelled');
  });
});

describe.concurrent.each(kinds)('%s, declaring elicitation', (kind: CallerKind) => {
  let caller: PlainCaller;

  beforeAll(async () => {
    caller = await openCaller(kind, server.url, { elicit: { action: 'delete' } });
  });

  afterAll(() => caller?.close());

  it('gets the question as an elicitation, once, and its answer reaches the task', async () => {
    const filename = `${label(`elicit-${kind}`)}.txt`;
    const result = resultOf(await caller.call('triage_file', { filename }), 'triage_file');
    // Answered within the grace time, the call ends with the task's result; later, with a handle.
    const taskId = result.structuredContent?.taskId as string | undefined;
    if (taskId) await waitUntil(caller, taskId);
    const final = taskId ? resultOf(await caller.call('task_result', { taskId }), 'task_result') : result;
    expect(textOf(final)).toBe(`${filename}: delete`);
    const asked = caller.elicitations.filter((seen) => seen.message === `What should happen to ${filename}?`);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.requestedSchema).toEqual(
      taskManifest.tools.find((t) => t.name === 'triage_file')?.questions?.[0]?.schema,
    );
  });

  it('gets a question the task asks during task_wait as an elicitation, then follows on to the result', async () => {
    const job = label(`later-${kind}`);
    const handle = viewOf(resultOf(await caller.call('hold_then_ask', { label: job }), 'hold_then_ask'), 'handle');
    expect(handle.status).toBe('working');
    const { taskId } = handle;
    const waiting = callView(caller, 'task_wait', { taskId });
    server.tools.release(job);
    const waited = await waiting;
    const done = TERMINAL.has(waited.status) ? waited : await waitUntil(caller, taskId);
    expect(done.status).toBe('completed');
    expect(textOf(resultOf(await caller.call('task_result', { taskId }), 'task_result'))).toBe(`${job}: delete`);
    const asked = caller.elicitations.filter((seen) => seen.message === `What should happen to the output of ${job}?`);
    expect(asked).toHaveLength(1);
  });
});

describe('callers that speak tasks', () => {
  it('2025-11-25 with the tasks capability: the tool list as before, no companion tools, tasks as before', async () => {
    const client = await connectV1(server.url, {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } },
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(taskManifest.tools.map((tool) => tool.name));
      const hold = tools.find((tool) => tool.name === 'hold_job');
      expect(hold?.outputSchema).toEqual(taskManifest.tools.find((tool) => tool.name === 'hold_job')?.outputSchema);
      const job = label('aware-2025');
      const created = await client.request(
        { method: 'tools/call', params: { name: 'hold_job', arguments: { label: job, seconds: 30 }, task: {} } },
        CreateTaskResultSchema,
      );
      expect(created.task.status).toBe('working');
      await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(await server.tools.ended(job)).toBe('stopped');
    } finally {
      await client.close();
    }
  });

  it('2026-07-28 with the tasks extension: the tool list as before, no companion tools', async () => {
    const listed = await rpc2026(server.url, 'tools/list', {}, { capabilities: WITH_TASKS });
    const tools = listed.result?.tools as { name: string; outputSchema?: unknown }[];
    expect(tools.map((tool) => tool.name)).toEqual(taskManifest.tools.map((tool) => tool.name));
    expect(tools.find((tool) => tool.name === 'hold_job')?.outputSchema).toEqual(
      taskManifest.tools.find((tool) => tool.name === 'hold_job')?.outputSchema,
    );
    const created = await rpc2026(server.url, 'tools/call', { name: 'quick_sum', arguments: { a: 1, b: 1 } });
    expect(created.result?.resultType).toBe('task');
  });

  it('the same request without the extension lists the companion tools (per request, not per connection)', async () => {
    const listed = await rpc2026(server.url, 'tools/list', {}, { capabilities: {} });
    const names = ((listed.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining([...COMPANIONS]));
  });
});

describe('two principals', () => {
  it("another principal's or an anonymous caller's companion tools find nothing of a handle, as for an unknown id", async () => {
    const aliceKind: CallerKind = pythonInstalled ? 'python (2025-11-25)' : 'v1 (2025-11-25)';
    const bobKind: CallerKind = pythonInstalled ? 'python (2026-07-28)' : 'v2 (2026-07-28)';
    const [alice, ...others] = await Promise.all([
      openCaller(aliceKind, server.url, { token: 'alice' }),
      openCaller(bobKind, server.url, { token: 'bob' }),
      openCaller('v1 (2025-11-25)', server.url, { token: 'bob' }),
      openCaller('v2 (2026-07-28)', server.url),
    ]);
    try {
      const job = label('alice');
      const { taskId } = viewOf(
        resultOf(await alice!.call('hold_job', { label: job, seconds: LONG_TASK_SECONDS }), 'hold_job'),
        'hold_job',
      );
      // Same length and alphabet as a real id, but no task's.
      const unknownId = [...taskId].reverse().join('');
      const argsFor = (tool: string, id: string) =>
        tool === 'task_answer'
          ? { taskId: id, question: 'verdict', answer: { action: 'keep' } }
          : tool === 'task_wait'
            ? { taskId: id, seconds: 1 }
            : { taskId: id };
      for (const other of others) {
        for (const tool of COMPANIONS) {
          const onAlices = await other.call(tool, argsFor(tool, taskId));
          const onUnknown = await other.call(tool, argsFor(tool, unknownId));
          const what = `${other.label} ${tool}`;
          expect(JSON.stringify(onAlices), what).not.toContain('"status":"working"');
          expect(
            JSON.stringify(onAlices).replaceAll(taskId, '<id>'),
            `${what} tells Alice's task from an unknown one`,
          ).toBe(JSON.stringify(onUnknown).replaceAll(unknownId, '<id>'));
          expect('error' in onAlices || ('result' in onAlices && onAlices.result.isError === true), what).toBe(true);
        }
      }
      expect(await stillRunning(job)).toBe(true);
      expect((await callView(alice!, 'task_status', { taskId })).status).toBe('working');
      expect((await callView(alice!, 'task_cancel', { taskId })).status).toBe('cancelled');
    } finally {
      await Promise.all([alice, ...others].map((caller) => caller?.close()));
    }
  });
});
