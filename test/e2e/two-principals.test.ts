/**
 * Two principals, one server: every task method and stream of all three dialects, and the
 * companion tools of clients without tasks, tried by one principal on the other's tasks and
 * sessions, over real HTTP with a real bearer verifier, on both runtimes (BullMQ on a real
 * Redis). Nothing of Alice's may be reached, answered, listed, cancelled or deleted by Bob, by
 * an anonymous caller, or by a token that names nobody.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { clientTaskKey } from '../../src/engine/engine.js';
import type { TaskServerOptions } from '../../src/host/task-server.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { connectV1, listenForTasks, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

/** token → subject; `nosub` verifies but names nobody. */
const TOKENS: Record<string, string | undefined> = { alice: 'alice', bob: 'bob', nosub: undefined };
const SEP1686 = 'modelcontextprotocol.io/task';
const AnyResult = z.looseObject({});

const auth: TaskServerOptions['http'] = {
  auth: {
    // Anonymous callers are let in, so the suite can try them too; tokens are still verified.
    required: false,
    verifier: {
      async verifyAccessToken(token) {
        if (!(token in TOKENS)) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown token');
        const subject = TOKENS[token];
        return {
          token,
          clientId: 'shared-client',
          scopes: [],
          expiresAt: Math.floor(Date.now() / 1000) + 3600,
          ...(subject && { extra: { sub: subject } }),
        };
      },
    },
  },
};

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** One raw 2025-11-25 POST on a session, as any HTTP client could send it. */
async function postOnSession(url: string, sessionId: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function startTaskB(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

function sessionOf(client: Client): string {
  const id = (client.transport as { sessionId?: string } | undefined)?.sessionId;
  if (!id) throw new Error('the client has no session');
  return id;
}

function describeTwoPrincipals(runtime: 'memory' | 'bullmq', extra: () => Partial<TaskServerOptions>): void {
  describe(`two principals on the ${runtime} runtime`, () => {
    let running: RunningServer;
    let alice: Client;
    let bob: Client;
    let url: string;

    beforeAll(async () => {
      running = await startServer({
        manifest: taskManifest,
        instances: [new FixtureTools(), new GeneralTools()],
        sep1686: true,
        http: auth,
        ...extra(),
      });
      url = running.url;
      alice = await connectV1(url, { token: 'alice', capabilities: { elicitation: {} } });
      bob = await connectV1(url, { token: 'bob' });
    });

    afterAll(async () => {
      await Promise.allSettled([alice?.close(), bob?.close()]);
      await running?.close();
    });

    it('refuses a token without a subject with 401, before anything else', async () => {
      const modern = await rpc2026(url, 'tools/list', {}, { headers: bearer('nosub') });
      expect(modern.status).toBe(401);
      const legacy = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...bearer('nosub'),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      expect(legacy.status).toBe(401);
      expect(legacy.headers.get('www-authenticate')).toMatch(/invalid_token.*no subject/);
    });

    it("2025-11-25: Bob gets not-found for each of Alice's task methods, and an empty list", async () => {
      const taskId = await startTaskB(alice, 'slow_compute', { seconds: 30, label: 'alice-b' });
      await expect(bob.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
      await expect(bob.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).rejects.toMatchObject({
        code: -32602,
      });
      await expect(bob.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
      await expect(bob.request({ method: 'tasks/delete', params: { taskId } }, AnyResult)).rejects.toMatchObject({
        code: -32602,
      });
      expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
      expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('working');
      expect((await alice.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);
      await alice.experimental.tasks.cancelTask(taskId);
    });

    it("2026-07-28: Bob's get, update, cancel and listen find nothing of Alice's", async () => {
      const created = await rpc2026(
        url,
        'tools/call',
        { name: 'confirm_delete', arguments: { filename: 'alice.txt' } },
        { headers: bearer('alice') },
      );
      const taskId = created.result?.taskId as string;
      await pollUntil(
        () => rpc2026(url, 'tasks/get', { taskId }, { headers: bearer('alice') }),
        (reply) => reply.result?.status === 'input_required',
      );
      for (const method of ['tasks/get', 'tasks/cancel'] as const) {
        expect((await rpc2026(url, method, { taskId }, { headers: bearer('bob') })).error?.code).toBe(-32602);
      }
      const forged = await rpc2026(
        url,
        'tasks/update',
        { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
        { headers: bearer('bob') },
      );
      expect(forged.error?.code).toBe(-32602);
      const anonymous = await rpc2026(url, 'tasks/get', { taskId });
      expect(anonymous.error?.code).toBe(-32602);
      const listen = await listenForTasks(url, [taskId], { headers: bearer('bob') });
      const ack = await listen.stream?.next((message) => message.method === 'notifications/subscriptions/acknowledged');
      expect((ack?.params as { notifications?: { taskIds: string[] } } | undefined)?.notifications?.taskIds).toEqual(
        [],
      );
      listen.stream?.close();
      const still = await rpc2026(url, 'tasks/get', { taskId }, { headers: bearer('alice') });
      expect(still.result?.status).toBe('input_required');
      await rpc2026(url, 'tasks/cancel', { taskId }, { headers: bearer('alice') });
    });

    it("companion tools (clients without tasks): Bob and anonymous callers get the unknown id's not-found for each", async () => {
      // Alice's task waits for her answer, so a forged answer or cancel would show.
      const taskId = await startTaskB(alice, 'confirm_delete', { filename: 'companion.txt' });
      await pollUntil(
        () => alice.experimental.tasks.getTask(taskId),
        (task) => task.status === 'input_required',
      );
      const argumentsFor = (id: string): Record<string, Record<string, unknown>> => ({
        task_status: { taskId: id },
        task_wait: { taskId: id, seconds: 0 },
        task_result: { taskId: id },
        task_answer: { taskId: id, question: 'confirm', answer: { confirm: true } },
        task_cancel: { taskId: id },
      });
      const unknownId = 'no-such-task-000000000';
      // Both callers are sessions or requests without tasks: they are offered the companion tools.
      const legacy = async (id: string, tool: string) =>
        bob.callTool({ name: tool, arguments: argumentsFor(id)[tool] }).then(
          () => 'answered',
          (error: { code: number; message: string }) => ({
            code: error.code,
            message: error.message.replace(id, '<id>'),
          }),
        );
      const modern = async (id: string, tool: string, headers: Record<string, string>) => {
        const reply = await rpc2026(
          url,
          'tools/call',
          { name: tool, arguments: argumentsFor(id)[tool] },
          {
            capabilities: {},
            headers,
          },
        );
        return reply.error ? { code: reply.error.code, message: reply.error.message.replace(id, '<id>') } : 'answered';
      };
      for (const tool of Object.keys(argumentsFor(taskId))) {
        const unknown = await legacy(unknownId, tool);
        expect(unknown, tool).toMatchObject({ code: -32602 });
        expect(await legacy(taskId, tool), `Bob, 2025-11-25, ${tool}`).toEqual(unknown);
        expect(await modern(taskId, tool, bearer('bob')), `Bob, 2026-07-28, ${tool}`).toEqual(
          await modern(unknownId, tool, bearer('bob')),
        );
        expect(await modern(taskId, tool, {}), `anonymous, ${tool}`).toEqual(await modern(unknownId, tool, {}));
      }
      // Nothing reached Alice's task: still her open question, and she can still use the tools.
      expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('input_required');
      const own = await alice.callTool({ name: 'task_status', arguments: { taskId } });
      expect(own.structuredContent).toMatchObject({ taskId, status: 'input_required' });
      await alice.callTool({ name: 'task_cancel', arguments: { taskId } });
    });

    it('SEP-1686: the same client-chosen id names a task of each, and neither learns of the other', async () => {
      const call = (client: Client, taskId: string, seconds: number) =>
        client.request(
          {
            method: 'tools/call',
            params: {
              name: 'slow_compute',
              arguments: { seconds, label: taskId },
              _meta: { [SEP1686]: { taskId, keepAlive: 60_000 } },
            },
          },
          CallToolResultSchema,
          { timeout: 30_000 },
        );
      const alicesCall = call(alice, 'job-1', 30).catch((error: unknown) => error);
      await pollUntil(
        () => alice.request({ method: 'tasks/get', params: { taskId: 'job-1' } }, AnyResult).catch(() => ({})),
        (task) => (task as { taskId?: string }).taskId === 'job-1',
      );
      // Bob picks the same id: no "already exists", and his task is his own.
      const bobs = await call(bob, 'job-1', 0);
      expect(bobs.content).toEqual([{ type: 'text', text: 'Computed job-1 in 0s' }]);
      await bob.request({ method: 'tasks/delete', params: { taskId: 'job-1' } }, AnyResult);
      const alices = await alice.request({ method: 'tasks/get', params: { taskId: 'job-1' } }, AnyResult);
      expect(alices).toMatchObject({ taskId: 'job-1', status: 'working' });
      // An id of digits only works the same on both runtimes.
      const digits = await call(alice, '424242', 0);
      expect(digits.content).toEqual([{ type: 'text', text: 'Computed 424242 in 0s' }]);
      await alice.experimental.tasks.cancelTask('job-1');
      await alicesCall;
    });

    it("SEP-1686: an anonymous caller's task is found only by its chosen id, never by the stored id others can compute", async () => {
      const anonymous = await connectV1(url, {});
      const pending = anonymous
        .request(
          {
            method: 'tools/call',
            params: {
              name: 'slow_compute',
              arguments: { seconds: 30, label: 'anon' },
              _meta: { [SEP1686]: { taskId: 'anon-job', keepAlive: 60_000 } },
            },
          },
          CallToolResultSchema,
          { timeout: 60_000 },
        )
        .catch((error: unknown) => error);
      await pollUntil(
        () => anonymous.request({ method: 'tasks/get', params: { taskId: 'anon-job' } }, AnyResult).catch(() => ({})),
        (task) => (task as { taskId?: string }).taskId === 'anon-job',
      );
      // Anyone can compute where a chosen id of an anonymous caller is stored.
      const storedId = clientTaskKey({ principal: null }, 'anon-job');
      const outcome = (reply: { error?: { code: number }; result?: Record<string, unknown> }) =>
        reply.error?.code ?? (reply.result?.structuredContent as { status?: string } | undefined)?.status ?? 'answered';
      const companion = (tool: string) =>
        rpc2026(
          url,
          'tools/call',
          { name: tool, arguments: { taskId: storedId } },
          { capabilities: {}, headers: bearer('bob') },
        );
      const task = (method: string) => rpc2026(url, method, { taskId: storedId }, { headers: bearer('bob') });
      expect({
        taskStatus: outcome(await companion('task_status')),
        taskResult: outcome(await companion('task_result')),
        taskCancel: outcome(await companion('task_cancel')),
        tasksGet: outcome(await task('tasks/get')),
        tasksCancel: outcome(await task('tasks/cancel')),
        legacyGet: await bob.request({ method: 'tasks/get', params: { taskId: storedId } }, AnyResult).then(
          () => 'answered',
          (error: { code: number }) => error.code,
        ),
        legacyCancel: await bob.request({ method: 'tasks/cancel', params: { taskId: storedId } }, AnyResult).then(
          () => 'answered',
          (error: { code: number }) => error.code,
        ),
      }).toEqual({
        taskStatus: -32602,
        taskResult: -32602,
        taskCancel: -32602,
        tasksGet: -32602,
        tasksCancel: -32602,
        legacyGet: -32602,
        legacyCancel: -32602,
      });
      // Bob's own chosen id of the same name is another task in his namespace.
      await expect(
        bob.request({ method: 'tasks/get', params: { taskId: 'anon-job' } }, AnyResult),
      ).rejects.toMatchObject({
        code: -32602,
      });
      const own = await anonymous.request({ method: 'tasks/get', params: { taskId: 'anon-job' } }, AnyResult);
      expect(own).toMatchObject({ taskId: 'anon-job', status: 'working' });
      await anonymous.request({ method: 'tasks/cancel', params: { taskId: 'anon-job' } }, AnyResult);
      await pending;
      await anonymous.close();
    });

    it('2025-11-25: a question pushed on the GET stream reaches only the session that created its task', async () => {
      const asked: Record<string, string[]> = { alice: [], 'alice-2': [], bob: [] };
      const asker = async (name: string, token: string) => {
        const client = await connectV1(url, { token, capabilities: { elicitation: {} } });
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          const related = request.params._meta?.['io.modelcontextprotocol/related-task'] as { taskId: string };
          asked[name]?.push(related.taskId);
          return { action: 'accept', content: { confirm: true } };
        });
        return client;
      };
      // Each polls only: the standalone stream is the only way a question reaches it.
      const clients = [await asker('alice', 'alice'), await asker('alice-2', 'alice'), await asker('bob', 'bob')];
      const [aliceOne, aliceTwo, bobToo] = clients as [Client, Client, Client];
      try {
        const alicesTask = await startTaskB(aliceOne, 'confirm_delete', { filename: 'alice-pushed.txt' });
        await pollUntil(
          () => aliceOne.experimental.tasks.getTask(alicesTask),
          (task) => task.status === 'completed',
        );
        // Bob's own question comes after anything pushed to his stream before it.
        const bobsTask = await startTaskB(bobToo, 'confirm_delete', { filename: 'bob-pushed.txt' });
        await pollUntil(
          () => bobToo.experimental.tasks.getTask(bobsTask),
          (task) => task.status === 'completed',
        );
        const alicesOther = await startTaskB(aliceTwo, 'confirm_delete', { filename: 'alice-other.txt' });
        await pollUntil(
          () => aliceTwo.experimental.tasks.getTask(alicesOther),
          (task) => task.status === 'completed',
        );
        expect(asked).toEqual({ alice: [alicesTask], 'alice-2': [alicesOther], bob: [bobsTask] });
        await expect(bobToo.experimental.tasks.getTaskResult(alicesTask, CallToolResultSchema)).rejects.toMatchObject({
          code: -32602,
        });
      } finally {
        await Promise.allSettled(clients.map((client) => client.close()));
      }
    });

    it("Bob cannot use Alice's session: POST, GET stream, DELETE and forged answers all get 404", async () => {
      const sessionId = sessionOf(alice);
      // Alice's client holds the question open: nobody but Alice may answer it.
      const asked: { id: unknown }[] = [];
      let answerAlice: ((result: ElicitResult) => void) | undefined;
      alice.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
        asked.push({ id: extra.requestId });
        return new Promise<ElicitResult>((resolve) => {
          answerAlice = resolve;
        });
      });
      const taskId = await startTaskB(alice, 'confirm_delete', { filename: 'precious.txt' });
      const result = alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await pollUntil(
        async () => asked.length,
        (count) => count > 0,
      );
      const elicitationId = asked[0]?.id;
      // Not a counter a stranger could guess.
      expect(typeof elicitationId).toBe('number');
      expect(elicitationId as number).toBeGreaterThan(1_000_000);

      const tries: { who: string; headers: Record<string, string> }[] = [
        { who: 'bob', headers: bearer('bob') },
        { who: 'anonymous', headers: {} },
      ];
      for (const { who, headers } of tries) {
        for (const id of [elicitationId, 0, 1, 2]) {
          const forged = await postOnSession(
            url,
            sessionId,
            { jsonrpc: '2.0', id, result: { action: 'accept', content: { confirm: true } } },
            headers,
          );
          expect(forged.status, `${who} answering ${String(id)}`).toBe(404);
        }
        const call = await postOnSession(url, sessionId, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, headers);
        expect(call.status, `${who} POST`).toBe(404);
        const stream = await fetch(url, {
          method: 'GET',
          headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, ...headers },
        });
        expect(stream.status, `${who} GET`).toBe(404);
        await stream.body?.cancel();
        const closed = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, ...headers } });
        expect(closed.status, `${who} DELETE`).toBe(404);
      }
      // The question is still Alice's, and her session still works.
      expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('input_required');
      expect((await alice.listTools()).tools.length).toBeGreaterThan(0);
      answerAlice?.({ action: 'accept', content: { confirm: false } });
      expect((await result).content).toEqual([{ type: 'text', text: 'Kept precious.txt' }]);
    });
  });
}

describeTwoPrincipals('memory', () => ({}));

describeWithRedis('two principals on Redis', () => {
  const prefix = randomPrefix();
  afterAll(() => deleteKeysUnder(prefix));
  describeTwoPrincipals('bullmq', () => ({ redis: { connection: REDIS_URL, prefix } }));
});
