/**
 * 2025-11-25 clients that only poll: a task's question goes to the session's standalone GET
 * stream as `elicitation/create` with the related-task `_meta`, when the client declared
 * elicitation. Each question reaches the session once, whichever channel the client listens on
 * (the GET stream or a `tasks/result` stream), and its answer is taken once.
 *
 * The clients: raw HTTP (to see which stream carries what), the v1 SDK client, and
 * `@modelcontextprotocol/ext-tasks` 0.2.2 on the v2 client, which is how MCP Inspector 2.12
 * drives 2025-11-25 tasks (it polls `tasks/get` and calls `tasks/result` only after the end).
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from '@modelcontextprotocol/ext-tasks/client';
import { JsonValueCodec } from '@modelcontextprotocol/ext-tasks/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { QUESTION_KEY_META_KEY } from '../../src/protocol/question-relay.js';
import { RELATED_TASK_META_KEY } from '../../src/protocol/tasks-2025.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import {
  connectV1,
  openRawSession,
  openStandaloneStream,
  pollUntil,
  type RunningServer,
  readSseStream,
  rpc2026,
  type SseStream,
  startServer,
} from './support.js';

const ELICITATION = { elicitation: {} };

interface Asked {
  readonly message: string;
  readonly meta: Record<string, unknown> | undefined;
}

/** A v1 client that answers each elicitation with `answer` (after `delayMs`) and keeps what it was asked. */
async function answeringClient(
  url: string,
  answer: (asked: number) => ElicitResult,
  options: { standaloneStream?: boolean; delayMs?: number } = {},
) {
  const client = await connectV1(url, {
    capabilities: ELICITATION,
    ...(options.standaloneStream === false && { standaloneStream: false }),
  });
  const asked: Asked[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push({ message: request.params.message, meta: request.params._meta });
    const reply = answer(asked.length);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    return reply;
  });
  return { client, asked };
}

async function startTask(client: Client, filename: string): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename }, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

const text = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

/** One raw POST on a raw session (`openRawSession`), answered as JSON or a one-message SSE stream. */
async function post(url: string, session: Record<string, string>, message: Record<string, unknown>) {
  const response = await fetch(url, { method: 'POST', headers: session, body: JSON.stringify(message) });
  const body = await response.text();
  if (!body) return { status: response.status };
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? JSON.parse(
        body
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .join(''),
      )
    : JSON.parse(body);
  return { status: response.status, ...json } as { status: number; result?: Record<string, unknown> };
}

/** Starts `confirm_delete` as a task on a raw session; its task id. */
async function startRawTask(url: string, session: Record<string, string>, filename: string): Promise<string> {
  const created = await post(url, session, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'confirm_delete', arguments: { filename }, task: {} },
  });
  const task = created.result?.task as { taskId?: string } | undefined;
  if (!task?.taskId) throw new Error(`no task created: ${JSON.stringify(created)}`);
  return task.taskId;
}

function describePollingClients(runtime: 'memory' | 'bullmq', extra: () => Record<string, unknown>): void {
  describe(`questions for clients that only poll (${runtime} runtime)`, () => {
    let running: RunningServer;
    let url: string;

    beforeAll(async () => {
      running = await startServer({
        manifest: taskManifest,
        instances: [new FixtureTools(), new GeneralTools()],
        ...extra(),
      });
      url = running.url;
    });

    afterAll(() => running?.close());

    it('sends the question on the standalone GET stream with the related task and question key', async () => {
      const session = await openRawSession(url, { capabilities: ELICITATION });
      const stream = await openStandaloneStream(url, session);
      try {
        const taskId = await startRawTask(url, session, 'raw.txt');
        const question = await stream.next((message) => message.method === 'elicitation/create');
        expect(question.params).toMatchObject({
          mode: 'form',
          message: 'Delete raw.txt?',
          _meta: { [RELATED_TASK_META_KEY]: { taskId }, [QUESTION_KEY_META_KEY]: 'confirm' },
        });
        const answered = await post(url, session, {
          jsonrpc: '2.0',
          id: question.id,
          result: { action: 'accept', content: { confirm: true } },
        });
        expect(answered.status).toBe(202);
        await pollUntil(
          () => post(url, session, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId } }),
          (reply) => reply.result?.status === 'completed',
        );
        const result = await post(url, session, { jsonrpc: '2.0', id: 3, method: 'tasks/result', params: { taskId } });
        expect(result.result?.content).toEqual([{ type: 'text', text: 'Deleted raw.txt' }]);
      } finally {
        stream.close();
      }
    });

    it('v1 client: polls tasks/get only, answers on the GET stream, and the task completes', async () => {
      const { client, asked } = await answeringClient(url, () => ({ action: 'accept', content: { confirm: true } }));
      try {
        const taskId = await startTask(client, 'polled.txt');
        const done = await pollUntil(
          () => client.experimental.tasks.getTask(taskId),
          (task) => task.status === 'completed',
        );
        expect(done.status).toBe('completed');
        expect(asked).toEqual([
          {
            message: 'Delete polled.txt?',
            meta: { [RELATED_TASK_META_KEY]: { taskId }, [QUESTION_KEY_META_KEY]: 'confirm' },
          },
        ]);
        expect(text(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toBe(
          'Deleted polled.txt',
        );
      } finally {
        await client.close();
      }
    });

    it('asks once a client that both polls with its GET stream open and waits on tasks/result', async () => {
      // The answer takes a while, so both channels see the question out before it is in.
      const { client, asked } = await answeringClient(url, () => ({ action: 'accept', content: { confirm: true } }), {
        delayMs: 300,
      });
      try {
        const taskId = await startTask(client, 'both.txt');
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(text(result)).toBe('Deleted both.txt');
        expect(asked.map((question) => question.message)).toEqual(['Delete both.txt?']);
      } finally {
        await client.close();
      }
    });

    it('asks again, once, after an answer that does not fit, whichever channel took the first', async () => {
      const { client, asked } = await answeringClient(
        url,
        (count) =>
          count === 1
            ? { action: 'accept', content: { confirm: 'yes please' } }
            : { action: 'accept', content: { confirm: true } },
        { delayMs: 100 },
      );
      try {
        const taskId = await startTask(client, 'twice.txt');
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(text(result)).toBe('Deleted twice.txt');
        expect(asked.map((question) => question.message)).toEqual(['Delete twice.txt?', 'Delete twice.txt?']);
      } finally {
        await client.close();
      }
    });

    it('without a GET stream: the question waits for tasks/result, which asks it as before', async () => {
      const { client, asked } = await answeringClient(url, () => ({ action: 'accept', content: { confirm: false } }), {
        standaloneStream: false,
      });
      try {
        const taskId = await startTask(client, 'nostream.txt');
        await pollUntil(
          () => client.experimental.tasks.getTask(taskId),
          (task) => task.status === 'input_required',
        );
        // Polling alone cannot reach this client. Nothing may hold the question either (a push
        // into a stream that is not there): the tasks/result below must still ask it.
        expect(asked).toEqual([]);
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(text(result)).toBe('Kept nostream.txt');
        expect(asked).toHaveLength(1);
        expect(asked[0]?.meta).toMatchObject({ [RELATED_TASK_META_KEY]: { taskId } });
      } finally {
        await client.close();
      }
    });

    it('pushes nothing to a client that did not declare elicitation', async () => {
      const session = await openRawSession(url);
      const stream = await openStandaloneStream(url, session);
      try {
        const taskId = await startRawTask(url, session, 'mute.txt');
        const isStatus = (status: string) => (message: Record<string, unknown>) =>
          message.method === 'notifications/tasks/status' && (message.params as { status?: string }).status === status;
        const before: Record<string, unknown>[] = [];
        const take = async (accept: (message: Record<string, unknown>) => boolean) => {
          for (;;) {
            const message = await stream.next();
            before.push(message);
            if (accept(message)) return;
          }
        };
        await take(isStatus('input_required'));
        await post(url, session, { jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { taskId } });
        // Everything the stream carried up to the task's last word: a question would be in it.
        await take(isStatus('cancelled'));
        expect(before.filter((message) => message.method === 'elicitation/create')).toEqual([]);
        expect(before.filter(isStatus('input_required'))).toHaveLength(1);
      } finally {
        stream.close();
      }
    });

    it('pushes a question asked before the GET stream opened once it opens', async () => {
      const session = await openRawSession(url, { capabilities: ELICITATION });
      const taskId = await startRawTask(url, session, 'late.txt');
      await pollUntil(
        () => post(url, session, { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId } }),
        (reply) => reply.result?.status === 'input_required',
      );
      let stream: SseStream | undefined = await openStandaloneStream(url, session);
      try {
        const question = await stream.next((message) => message.method === 'elicitation/create');
        expect(question.params).toMatchObject({ _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
        await post(url, session, { jsonrpc: '2.0', id: question.id, result: { action: 'decline' } });
        stream.close();
        stream = undefined;
        await pollUntil(
          () => post(url, session, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }),
          (reply) => reply.result?.status === 'completed',
        );
        const result = await post(url, session, { jsonrpc: '2.0', id: 4, method: 'tasks/result', params: { taskId } });
        expect(result.result?.content).toEqual([{ type: 'text', text: 'Kept late.txt' }]);
      } finally {
        stream?.close();
      }
    });

    it('does not push again on the stream whose client failed the request, but on its next stream', async () => {
      const session = await openRawSession(url, { capabilities: ELICITATION });
      let stream = await openStandaloneStream(url, session);
      try {
        const taskId = await startRawTask(url, session, 'flaky.txt');
        const isQuestion = (message: Record<string, unknown>) => message.method === 'elicitation/create';
        const first = await stream.next(isQuestion);
        await post(url, session, { jsonrpc: '2.0', id: first.id, error: { code: -32603, message: 'dialog crashed' } });
        // The same stream carries the task's later news, but not the question again.
        await post(url, session, {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 0, label: 'marker' }, task: {} },
        });
        await stream.next(
          (message) =>
            message.method === 'notifications/tasks/status' &&
            (message.params as { status?: string }).status === 'completed',
        );
        await expect(stream.next(isQuestion, 300)).rejects.toThrow(/no matching message/);
        stream.close();
        // The server sees the close when its side of the stream ends: until then a GET gets 409.
        stream = await pollUntil(
          () => openStandaloneStream(url, session).catch(() => undefined),
          (opened) => opened !== undefined,
        ).then((opened) => opened as SseStream);
        const second = await stream.next(isQuestion);
        expect(second.params).toMatchObject({ _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
        await post(url, session, {
          jsonrpc: '2.0',
          id: second.id,
          result: { action: 'accept', content: { confirm: true } },
        });
        await pollUntil(
          () => post(url, session, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }),
          (reply) => reply.result?.status === 'completed',
        );
      } finally {
        stream.close();
      }
    });

    it('withdraws a pushed question once it is answered elsewhere or its task ends', async () => {
      const session = await openRawSession(url, { capabilities: ELICITATION });
      const stream = await openStandaloneStream(url, session);
      try {
        const isQuestion = (message: Record<string, unknown>) => message.method === 'elicitation/create';
        const cancelledFor = (id: unknown) => (message: Record<string, unknown>) =>
          message.method === 'notifications/cancelled' && (message.params as { requestId?: unknown }).requestId === id;
        // Answered on another channel (here the 2026-07-28 tasks/update of the same task).
        const answered = await startRawTask(url, session, 'elsewhere.txt');
        const first = await stream.next(isQuestion);
        await rpc2026(url, 'tasks/update', {
          taskId: answered,
          inputResponses: { confirm: { action: 'accept', content: { confirm: false } } },
        });
        await stream.next(cancelledFor(first.id));
        // The client's late answer to the withdrawn request changes nothing.
        await post(url, session, {
          jsonrpc: '2.0',
          id: first.id,
          result: { action: 'accept', content: { confirm: true } },
        });
        const done = await pollUntil(
          () => post(url, session, { jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId: answered } }),
          (reply) => reply.result !== undefined,
        );
        expect(done.result?.content).toEqual([{ type: 'text', text: 'Kept elsewhere.txt' }]);
        // The task ends while its question is out.
        const ended = await startRawTask(url, session, 'ended.txt');
        const second = await stream.next(isQuestion);
        expect(second.params).toMatchObject({ _meta: { [RELATED_TASK_META_KEY]: { taskId: ended } } });
        await post(url, session, { jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: { taskId: ended } });
        await stream.next(cancelledFor(second.id));
      } finally {
        stream.close();
      }
    });

    it('asks again on a new tasks/result after the client left the one that had the question', async () => {
      const session = await openRawSession(url, { capabilities: ELICITATION });
      const taskId = await startRawTask(url, session, 'left.txt');
      const waitForResult = async (id: number) => {
        const controller = new AbortController();
        const response = await fetch(url, {
          method: 'POST',
          signal: controller.signal,
          headers: session,
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }),
        });
        return readSseStream(response, controller);
      };
      const isQuestion = (message: Record<string, unknown>) => message.method === 'elicitation/create';
      const first = await waitForResult(10);
      const asked = await first.next(isQuestion);
      first.close();
      // The question left with that request: the next one asks it anew, and takes the answer.
      const second = await waitForResult(11);
      try {
        const again = await second.next(isQuestion);
        expect(again.id).not.toBe(asked.id);
        expect(again.params).toMatchObject({ _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
        await post(url, session, {
          jsonrpc: '2.0',
          id: again.id,
          result: { action: 'accept', content: { confirm: true } },
        });
        const result = await second.next((message) => message.id === 11);
        expect(result.result).toMatchObject({ content: [{ type: 'text', text: 'Deleted left.txt' }] });
      } finally {
        second.close();
      }
    });

    it('ext-tasks 0.2.2 on the v2 client at 2025-11-25 (as Inspector 2.12 drives it): the question reaches it', async () => {
      const methods: string[] = [];
      // Records what the client sends: its polls, and whether it opened the GET stream.
      const watching: typeof fetch = async (input, init) => {
        const method = (init?.method ?? 'GET').toUpperCase();
        methods.push(method === 'POST' ? String(JSON.parse(String(init?.body ?? '{}')).method ?? 'reply') : method);
        return fetch(input, init);
      };
      const client = new ClientV2(
        { name: 'ext-tasks-legacy', version: '1.0.0' },
        { capabilities: ELICITATION, versionNegotiation: { mode: 'legacy' } },
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: watching }));
      const asked: unknown[] = [];
      const session = createTaskSessionFromClient(client, {
        endpointId: `ext-tasks-legacy:${url}`,
        onInputRequest: createApplicationInputHandler({
          elicitation: (request, context) => {
            asked.push({ params: request.params, scope: context.scope, taskId: context.taskId });
            return { action: 'accept', content: { confirm: true } };
          },
          sampling: () => {
            throw new Error('no sampling here');
          },
          roots: () => {
            throw new Error('no roots here');
          },
        }),
        onError: () => {},
      });
      try {
        expect(client.getProtocolEra()).toBe('legacy');
        const execution = await session.callTool(
          'confirm_delete',
          { filename: 'report.txt' },
          // Inspector's "Run as Task" box: the tool's task support is optional.
          { resultCodec: JsonValueCodec, task: { preference: 'require' } },
        );
        if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
        const taskId = execution.handle.taskId;
        const { outcome } = await execution.settle();
        expect(resultFromTaskOutcome(outcome)).toMatchObject({
          content: [{ type: 'text', text: 'Deleted report.txt' }],
        });
        expect(asked).toEqual([
          {
            params: expect.objectContaining({
              message: 'Delete report.txt?',
              _meta: expect.objectContaining({ [RELATED_TASK_META_KEY]: { taskId } }),
            }),
            scope: 'task',
            taskId,
          },
        ]);
        // The library opened the GET stream, polled, and asked for the result only at the end.
        expect(methods).toContain('GET');
        const results = methods.filter((method) => method === 'tasks/result');
        expect(results).toHaveLength(1);
        expect(methods.lastIndexOf('tasks/get')).toBeLessThan(methods.indexOf('tasks/result'));
      } finally {
        await session.close();
        await client.close();
      }
    });
  });
}

describePollingClients('memory', () => ({}));

describeWithRedis('questions for clients that only poll, on Redis', () => {
  const prefix = randomPrefix();
  afterAll(() => deleteKeysUnder(prefix));
  describePollingClients('bullmq', () => ({ redis: { connection: REDIS_URL, prefix } }));
});
