/**
 * The bounds of callers without tasks, driven over real HTTP as an adversarial client would:
 * sealed request state, blocking-wait slots (task_wait and grace waits), hang-ups that leave
 * nothing behind, and the sizes of companion tool arguments and answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, openRawSession, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

const principalFromBearer = ({ headers }: { headers?: Headers }) =>
  headers?.get('authorization')?.replace(/^Bearer /, '') ?? null;
const bearer = (who: string) => ({ authorization: `Bearer ${who}` });
const UNAWARE = {};
const UNAWARE_ELICIT = { elicitation: {} };

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    resolvePrincipal: principalFromBearer,
    limits: { maxBlockingResultsPerPrincipal: 1 },
    unawareClients: { graceMs: 3000 },
  });
});
afterAll(() => running?.close());

/** A raw 2026 tools/call that can be dropped mid-flight. */
function dropped2026(name: string, args: Record<string, unknown>, who: string, capabilities = UNAWARE) {
  const controller = new AbortController();
  const done = fetch(running.url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      ...bearer(who),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 99,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'dropper', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  })
    .then((response) => response.text())
    .catch((error: unknown) => error);
  return { abort: () => controller.abort(), done };
}

const waitersTotal = () => running.server.stats().waiters.total.result;
const engineWaiters = () => running.server.stats().engine.waiters;

async function cancel(taskId: string, who: string): Promise<void> {
  await rpc2026(
    running.url,
    'tools/call',
    { name: 'task_cancel', arguments: { taskId } },
    { capabilities: UNAWARE, headers: bearer(who) },
  );
}

async function handleFor(who: string, seconds = 30): Promise<string> {
  const reply = await rpc2026(
    running.url,
    'tools/call',
    { name: 'slow_compute', arguments: { seconds, label: 'bounds' } },
    { capabilities: UNAWARE, headers: bearer(who) },
  );
  const taskId = (reply.result?.structuredContent as { taskId?: string } | undefined)?.taskId;
  if (!taskId) throw new Error(`no handle: ${JSON.stringify(reply)}`);
  return taskId;
}

describe('requestState minted for a call without tasks', () => {
  it('is refused when replayed by another principal, or onto other arguments', async () => {
    const first = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'secret.txt' } },
      { capabilities: UNAWARE_ELICIT, headers: bearer('alice') },
    );
    expect(first.result?.resultType).toBe('input_required');
    const requestState = first.result?.requestState as string;
    expect(typeof requestState).toBe('string');
    const forged = await rpc2026(
      running.url,
      'tools/call',
      {
        name: 'confirm_delete',
        arguments: { filename: 'secret.txt' },
        requestState,
        inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      },
      { capabilities: UNAWARE_ELICIT, headers: bearer('bob') },
    );
    expect(forged.error?.code).toBe(-32602);
    // Replayed onto another tool or other arguments by Alice herself: refused too.
    const otherArgs = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'other.txt' }, requestState },
      { capabilities: UNAWARE_ELICIT, headers: bearer('alice') },
    );
    expect(otherArgs.error?.code).toBe(-32602);
  });
});

describe('task_wait holds a blocking slot', () => {
  it('counts against maxBlockingResultsPerPrincipal and releases it when the client hangs up', async () => {
    const taskId = await handleFor('carol');
    const first = dropped2026('task_wait', { taskId, seconds: 25 }, 'carol');
    await pollUntil(
      async () => waitersTotal(),
      (total) => total === 1,
    );
    const second = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_wait', arguments: { taskId, seconds: 1 } },
      { capabilities: UNAWARE, headers: bearer('carol') },
    );
    expect(second.error, JSON.stringify(second)).toMatchObject({ code: -32010 });
    expect(second.error?.message).toBe(
      'Too many blocking waits (tasks/result, task_wait) for this caller: the limit is 1 (maxBlockingResultsPerPrincipal)',
    );
    first.abort();
    await first.done;
    await pollUntil(
      async () => waitersTotal(),
      (total) => total === 0,
      3000,
    );
    const third = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_wait', arguments: { taskId, seconds: 0 } },
      { capabilities: UNAWARE, headers: bearer('carol') },
    );
    expect(third.result?.structuredContent).toMatchObject({ taskId, status: 'working' });
    expect(running.server.stats().engine).toMatchObject({});
    await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_cancel', arguments: { taskId } },
      {
        capabilities: UNAWARE,
        headers: bearer('carol'),
      },
    );
  });

  it('2025-11-25: a task_wait dropped by its client leaves no waiter, and its slot is free again', async () => {
    const client = await connectV1(running.url, { token: 'gina' });
    const handle = await client.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'w' } });
    const taskId = (handle.structuredContent as { taskId: string }).taskId;
    const session = await openRawSession(running.url, { headers: bearer('gina') });
    const controller = new AbortController();
    const wait = fetch(running.url, {
      method: 'POST',
      headers: session,
      signal: controller.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'task_wait', arguments: { taskId, seconds: 25 } },
      }),
    })
      .then((response) => response.text())
      .catch((error: unknown) => error);
    await pollUntil(
      async () => waitersTotal(),
      (total) => total === 1,
    );
    controller.abort();
    await wait;
    await pollUntil(
      async () => waitersTotal(),
      (total) => total === 0,
      2000,
    );
    // The one slot (maxBlockingResultsPerPrincipal: 1) is free for the next wait.
    const next = await client.callTool({ name: 'task_wait', arguments: { taskId, seconds: 0 } });
    expect(next.structuredContent).toMatchObject({ taskId, status: 'working' });
    await client.callTool({ name: 'task_cancel', arguments: { taskId } });
    await client.close();
  });

  it('a grace wait dropped by its client leaves no engine waiter behind', async () => {
    const before = engineWaiters();
    const call = dropped2026('slow_compute', { seconds: 30, label: 'grace' }, 'dave');
    await pollUntil(
      async () => engineWaiters(),
      (now) => now > before,
    );
    call.abort();
    await call.done;
    // The grace time is 3 s: well before it, the dropped call's wait must be gone.
    await pollUntil(
      async () => engineWaiters(),
      (now) => now === before,
      1500,
    );
  });
});

describe('bounds of the companion tools', () => {
  it('task_answer refuses an answer over maxAnswerBytes with the size error', async () => {
    const start = await rpc2026(
      running.url,
      'tools/call',
      { name: 'multi_input', arguments: {} },
      { capabilities: UNAWARE, headers: bearer('erin') },
    );
    const taskId = (start.result?.structuredContent as { taskId?: string } | undefined)?.taskId as string;
    await pollUntil(
      () =>
        rpc2026(
          running.url,
          'tools/call',
          { name: 'task_status', arguments: { taskId } },
          {
            capabilities: UNAWARE,
            headers: bearer('erin'),
          },
        ),
      (reply) => (reply.result?.structuredContent as { status?: string })?.status === 'input_required',
    );
    const big = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_answer', arguments: { taskId, question: 'first', answer: { name: 'x'.repeat(70 * 1024) } } },
      { capabilities: UNAWARE, headers: bearer('erin') },
    );
    expect(big.error?.message ?? JSON.stringify(big.result)).toMatch(/maxAnswerBytes/);
  });

  it('companion tool arguments are bounded like any tool call, with its size error (maxArgumentBytes)', async () => {
    const taskId = await handleFor('frank', 30);
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_status', arguments: { taskId, junk: 'y'.repeat(1200 * 1024) } },
      { capabilities: UNAWARE, headers: bearer('frank') },
    );
    expect(reply.error).toMatchObject({ code: -32602, data: { limit: 'maxArgumentBytes' } });
    expect(reply.error?.message).toMatch(/^The arguments of task_status are \d+ bytes, over the \d+-byte limit/);
    await cancel(taskId, 'frank');
  });

  it('task_wait refuses seconds that are not a finite number of at least 0, saying exactly what it got', async () => {
    const taskId = await handleFor('nina');
    // 1e400 is valid JSON that parses as Infinity: no JSON.stringify can send it.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'task_wait',
        arguments: { taskId, seconds: 424242 },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': UNAWARE,
        },
      },
    }).replace('424242', '1e400');
    const text = await fetch(running.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'task_wait',
        ...bearer('nina'),
      },
      body,
    }).then((response) => response.text());
    expect(text).toContain('-32602');
    expect(text).toContain('seconds must be a finite number of at least 0, not Infinity');
    const negative = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_wait', arguments: { taskId, seconds: -1 } },
      { capabilities: UNAWARE, headers: bearer('nina') },
    );
    expect(negative.error).toMatchObject({ code: -32602 });
    expect(negative.error?.message).toMatch(/^seconds must be a finite number of at least 0, not -1 /);
    await cancel(taskId, 'nina');
  });

  it('a refused answer echoes at most 80 characters of the offending key or value', async () => {
    const handle = await rpc2026(
      running.url,
      'tools/call',
      { name: 'confirm_delete', arguments: { filename: 'echo.txt' } },
      { capabilities: UNAWARE, headers: bearer('mona') },
    );
    const taskId = (handle.result?.structuredContent as { taskId?: string } | undefined)?.taskId as string;
    const answer = (value: Record<string, unknown>) =>
      rpc2026(
        running.url,
        'tools/call',
        { name: 'task_answer', arguments: { taskId, question: 'confirm', answer: value } },
        { capabilities: UNAWARE, headers: bearer('mona') },
      );
    const text = (reply: { result?: Record<string, unknown> }) =>
      (reply.result?.content as { text: string }[] | undefined)?.[0]?.text ?? '';
    const longKey = await answer({ confirm: true, ['k'.repeat(5000)]: 1 });
    expect(longKey.result?.isError).toBe(true);
    expect(text(longKey)).toContain(`field '${'k'.repeat(80)}…' is not part of this question`);
    expect(text(longKey)).not.toContain('k'.repeat(81));
    const longValue = await answer({ confirm: 'v'.repeat(5000) });
    expect(text(longValue)).toContain(`not "${'v'.repeat(79)}…`);
    expect(text(longValue)).not.toContain('v'.repeat(80));
    await cancel(taskId, 'mona');
  });
});

describe('grace waits and the blocking cap', () => {
  it('a grace wait holds a blocking slot: with it held, task_wait is refused with -32010', async () => {
    const taskId = await handleFor('kate');
    const before = engineWaiters();
    const grace = dropped2026('slow_compute', { seconds: 30, label: 'holding' }, 'kate');
    await pollUntil(
      async () => engineWaiters(),
      (now) => now > before,
    );
    const refused = await rpc2026(
      running.url,
      'tools/call',
      { name: 'task_wait', arguments: { taskId, seconds: 1 } },
      { capabilities: UNAWARE, headers: bearer('kate') },
    );
    expect(refused.error).toMatchObject({ code: -32010, data: { limit: 'maxBlockingResultsPerPrincipal' } });
    grace.abort();
    await grace.done;
    await cancel(taskId, 'kate');
  });

  it('with no slot free, a task call answers with its handle at once instead of an error', async () => {
    const taskId = await handleFor('liam');
    const holding = dropped2026('task_wait', { taskId, seconds: 25 }, 'liam');
    await pollUntil(
      async () => waitersTotal(),
      (total) => total === 1,
    );
    const started = Date.now();
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 30, label: 'no-slot' } },
      { capabilities: UNAWARE, headers: bearer('liam') },
    );
    // Well before the 3 s grace time: the call did not wait.
    expect(Date.now() - started).toBeLessThan(3000);
    const handle = reply.result?.structuredContent as { taskId: string; status: string };
    expect(handle).toMatchObject({ status: 'working' });
    holding.abort();
    await holding.done;
    await cancel(handle.taskId, 'liam');
    await cancel(taskId, 'liam');
  });
});
