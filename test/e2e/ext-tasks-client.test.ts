/**
 * A real requester library against our server: `@modelcontextprotocol/ext-tasks@0.2.2` on top of
 * the v2 client (`@modelcontextprotocol/client@2.4.0`), over Streamable HTTP at 2026-07-28
 * (the 2026-07-28 tasks extension, docs/traceability.md rows C-*), driving the conformance fixture in-process.
 *
 * How the library is wired (its README, `dist/client/sdk-client-adapter.js`):
 * - The v2 `Client` must negotiate the modern era (`versionNegotiation: { mode: { pin } }`);
 *   the adapter only picks the V2 task path when `getProtocolEra() === 'modern'` and the
 *   discovered capabilities carry `extensions["io.modelcontextprotocol/tasks"]: {}`.
 * - The v2 `Client` cannot carry task traffic itself: its 2026 result decoder rejects
 *   `resultType: "task"` (`SdkErrorCode.UnsupportedResultType`). So for `tools/call` and
 *   `tasks/*` the library calls a host-supplied `rawDispatch` and adds the request `_meta`
 *   (`v2RequestFraming`, with the tasks extension merged in). `tools/list` still goes through
 *   the `Client`. `rawDispatch` below is that host coordinator: one POST per request.
 * - The library sets `Mcp-Name: <taskId>` on `tasks/get|update|cancel`, but not
 *   `Mcp-Name: <tool>` on `tools/call`; the host has to add it, or our server answers `-32020`.
 *
 * The default result codec of 0.2.2 (`CallToolResultV2Schema`) requires `resultType:
 * "complete"` inside the `result` that `tasks/get` inlines for a completed task. The spec's
 * examples leave it out, but the inlined result is the original 2026-07-28 result, which carries
 * it, so the server includes it and the default codec works. Most tests pass `JsonValueCodec`;
 * one pins the default codec.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  type ApplicationElicitResult,
  type ApplicationInputRequest,
  createApplicationInputHandler,
  createTaskSessionFromClient,
  type DispatchOptions,
  type JsonRpcResponse,
  JsonRpcResponseError,
  type ResolvedInputExchangeContext,
  resultFromTaskOutcome,
  TaskCancelledError,
  type TaskEnabledSession,
  TaskFailedError,
  type TaskState,
} from '@modelcontextprotocol/ext-tasks/client';
import { type JsonValue, JsonValueCodec, taskId as toTaskId } from '@modelcontextprotocol/ext-tasks/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { pollUntil, type RunningServer, startServer, TASKS_EXTENSION } from './support.js';

const PROTOCOL_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'ext-tasks-e2e', version: '1.0.0' };

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({ manifest: taskManifest, instances: [new FixtureTools(), new GeneralTools()] });
});

afterAll(() => running?.close());

/** One request the raw coordinator sent, with what came back. */
interface WireExchange {
  readonly method: string;
  /** `Date.now()` when the request went out. */
  readonly sentAt: number;
  readonly headers: Record<string, string>;
  readonly params: Record<string, unknown>;
  readonly status: number;
  readonly response: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

interface Connection {
  readonly client: Client;
  readonly session: TaskEnabledSession;
  readonly wire: WireExchange[];
  /** The requests of one method, in order. */
  sent(method: string): WireExchange[];
  close(): Promise<void>;
}

interface ConnectOptions {
  /** Answers elicitations; other input kinds are refused. */
  readonly elicitation?: (
    request: Extract<ApplicationInputRequest, { kind: 'elicitation' }>,
    context: ResolvedInputExchangeContext,
  ) => ApplicationElicitResult | Promise<ApplicationElicitResult>;
  /** Add `Mcp-Name: <tool>` to `tools/call` (the library does not). Default true. */
  readonly nameToolCalls?: boolean;
}

async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(running.url)));
  const wire: WireExchange[] = [];
  let nextId = 1;

  // The host coordinator: owns ids and response matching, sends one POST per request with the
  // 2026-07-28 routing headers, and hands back the JSON-RPC result or error untouched.
  const rawDispatch = async (request: JsonValue, dispatch?: DispatchOptions): Promise<JsonRpcResponse> => {
    const { method, params = {} } = request as { method: string; params?: Record<string, unknown> };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      'mcp-method': method,
      ...(method === 'tools/call' && options.nameToolCalls !== false && { 'mcp-name': String(params.name) }),
      ...lowerCaseKeys(dispatch?.context?.headers ?? {}),
    };
    const id = nextId++;
    const sentAt = Date.now();
    const reply = await fetch(running.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      ...(dispatch?.signal && { signal: dispatch.signal }),
    });
    const text = await reply.text();
    const message = (
      reply.headers.get('content-type')?.includes('text/event-stream')
        ? text
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => JSON.parse(line.slice(5)))
            .find((m) => m.id === id)
        : JSON.parse(text)
    ) as WireExchange['response'];
    wire.push({ method, sentAt, headers, params, status: reply.status, response: message });
    return message.error
      ? { kind: 'error', error: message.error as Extract<JsonRpcResponse, { kind: 'error' }>['error'] }
      : { kind: 'result', result: message.result as JsonValue };
  };

  const elicitation = options.elicitation;
  const session = createTaskSessionFromClient(client, {
    endpointId: `ext-tasks-e2e:${running.url}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: PROTOCOL_VERSION, clientInfo: CLIENT_INFO, clientCapabilities: {} },
    ...(elicitation && {
      onInputRequest: createApplicationInputHandler({
        elicitation,
        sampling: () => {
          throw new Error('no sampling here');
        },
        roots: () => {
          throw new Error('no roots here');
        },
      }),
    }),
    onError: () => {},
  });
  return {
    client,
    session,
    wire,
    sent: (method) => wire.filter((exchange) => exchange.method === method),
    async close() {
      await session.close();
      await client.close();
    },
  };
}

function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

async function withConnection(options: ConnectOptions, body: (c: Connection) => Promise<void>): Promise<void> {
  const connection = await connect(options);
  try {
    await body(connection);
  } finally {
    await connection.close();
  }
}

const CALL = { resultCodec: JsonValueCodec } as const;

describe('ext-tasks 0.2.2 client against the conformance fixture (2026-07-28)', () => {
  it('negotiates the modern era and sees the tasks extension', async () => {
    await withConnection({}, async ({ client, session }) => {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS_EXTENSION]: {} });
      expect(session.capabilities).toEqual({
        inventory: 'known-handles',
        execution: true,
        cancellation: true,
        inputResponses: true,
        requestedRetention: false,
      });
    });
  });

  it('refuses a V2 session without a raw dispatch (the SDK client cannot carry resultType "task")', async () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(running.url)));
    try {
      expect(() => createTaskSessionFromClient(client, { endpointId: 'no-raw' })).toThrow(
        /requires options.rawDispatch/,
      );
    } finally {
      await client.close();
    }
  });

  it('runs a synchronous tool as an immediate execution', async () => {
    await withConnection({}, async ({ session }) => {
      const execution = await session.callTool('greet', { name: 'Ada' });
      expect(execution.kind).toBe('immediate');
      const { outcome } = await execution.settle();
      // The immediate CallToolResult carries resultType, so even the default codec accepts it.
      expect(resultFromTaskOutcome(outcome)).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Ada!' }],
      });
    });
  });

  it('creates a task, polls tasks/get at the hinted interval and settles with the result', async () => {
    await withConnection({}, async ({ session, sent }) => {
      const execution = await session.callTool('slow_compute', { seconds: 0.3, label: 'sum' }, CALL);
      if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
      const taskId = execution.handle.taskId;
      const statuses: TaskState[] = [];
      const { outcome } = await execution.settle({
        onEvent: (event) => {
          if (event.type === 'task') statuses.push(event.task.status);
        },
      });
      expect(outcome.status).toBe('completed');
      expect(resultFromTaskOutcome(outcome)).toEqual({
        content: [{ type: 'text', text: 'Computed sum in 0.3s' }],
        resultType: 'complete',
      });
      expect(outcome.task).toMatchObject({ taskId, status: 'completed', retentionMs: 600_000, pollInterval: 200 });
      expect(statuses.at(-1)).toBe('completed');

      const [call] = sent('tools/call');
      expect(call?.headers).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'slow_compute' });
      expect(call?.params._meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
      });
      expect(call?.response.result).toMatchObject({
        resultType: 'task',
        taskId,
        status: 'working',
        pollIntervalMs: 200,
      });
      const gets = sent('tasks/get');
      expect(gets.length).toBeGreaterThan(0);
      // pollIntervalMs: 200 is honoured, from the CreateTaskResult on.
      const times = [call?.sentAt ?? 0, ...gets.map((get) => get.sentAt)];
      for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(150);
      for (const get of gets) {
        expect(get.headers).toMatchObject({ 'mcp-method': 'tasks/get', 'mcp-name': taskId });
        expect(get.params).toMatchObject({ taskId });
        expect(get.response.result?.resultType).toBe('complete');
      }
    });
  });

  it('with the default result codec, a completed task settles completed: the inlined result carries resultType', async () => {
    await withConnection({}, async ({ session, sent }) => {
      const execution = await session.callTool('slow_compute', { seconds: 0, label: 'strict' });
      const { outcome } = await execution.settle();
      const completed = sent('tasks/get').at(-1)?.response.result;
      expect(completed).toMatchObject({ resultType: 'complete', status: 'completed' });
      expect(completed?.result).toEqual({
        content: [{ type: 'text', text: 'Computed strict in 0s' }],
        resultType: 'complete',
      });
      expect(outcome.status).toBe('completed');
    });
  });

  it("answers the task's question through onInputRequest and tasks/update", async () => {
    const asked: { request: ApplicationInputRequest; context: ResolvedInputExchangeContext }[] = [];
    await withConnection(
      {
        elicitation: (request, context) => {
          asked.push({ request, context });
          return { action: 'accept', content: { confirm: true } };
        },
      },
      async ({ session, sent }) => {
        const execution = await session.callTool('confirm_delete', { filename: 'report.txt' }, CALL);
        if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
        const taskId = execution.handle.taskId;
        const { outcome } = await execution.settle();
        expect(resultFromTaskOutcome(outcome)).toEqual({
          content: [{ type: 'text', text: 'Deleted report.txt' }],
          resultType: 'complete',
        });

        expect(asked).toHaveLength(1);
        expect(asked[0]?.request).toMatchObject({
          kind: 'elicitation',
          params: {
            mode: 'form',
            message: 'Delete report.txt?',
            requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
            _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
          },
        });
        expect(asked[0]?.context).toMatchObject({ scope: 'task', delivery: 'task-update', taskId, inputId: 'confirm' });

        const waiting = sent('tasks/get').find((get) => get.response.result?.status === 'input_required');
        expect(waiting?.response.result?.inputRequests).toMatchObject({ confirm: { method: 'elicitation/create' } });
        const updates = sent('tasks/update');
        expect(updates).toHaveLength(1);
        expect(updates[0]?.headers).toMatchObject({ 'mcp-method': 'tasks/update', 'mcp-name': taskId });
        expect(updates[0]?.params).toMatchObject({
          taskId,
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
          _meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } },
        });
        expect(updates[0]?.response.result).toMatchObject({ resultType: 'complete' });
      },
    );
  });

  it('passes a declined answer through', async () => {
    await withConnection({ elicitation: () => ({ action: 'decline' }) }, async ({ session, sent }) => {
      const execution = await session.callTool('confirm_delete', { filename: 'keep.txt' }, CALL);
      const { outcome } = await execution.settle();
      expect(resultFromTaskOutcome(outcome)).toEqual({
        content: [{ type: 'text', text: 'Kept keep.txt' }],
        resultType: 'complete',
      });
      expect(sent('tasks/update')[0]?.params.inputResponses).toEqual({ confirm: { action: 'decline' } });
    });
  });

  it('answers two outstanding questions in one tasks/update', async () => {
    const names: Record<string, string> = { first: 'Ada', second: 'Grace' };
    await withConnection(
      {
        elicitation: (_request, { inputId }) => ({ action: 'accept', content: { name: names[inputId ?? ''] ?? '?' } }),
      },
      async ({ session, sent }) => {
        const execution = await session.callTool('multi_input', {}, CALL);
        const { outcome } = await execution.settle();
        expect(resultFromTaskOutcome(outcome)).toEqual({
          content: [{ type: 'text', text: 'Hello, Ada and Grace!' }],
          resultType: 'complete',
        });
        const updates = sent('tasks/update');
        expect(updates).toHaveLength(1);
        expect(updates[0]?.params.inputResponses).toEqual({
          first: { action: 'accept', content: { name: 'Ada' } },
          second: { action: 'accept', content: { name: 'Grace' } },
        });
      },
    );
  });

  it('cancels a running task: tasks/cancel is acked, the outcome is cancelled, the server ends cancelled', async () => {
    await withConnection({}, async ({ session, sent }) => {
      const execution = await session.callTool('slow_compute', { seconds: 30, label: 'long' }, CALL);
      if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
      const taskId = execution.handle.taskId;
      await pollUntil(
        async () => sent('tasks/get').length,
        (n) => n > 0,
      );
      await execution.cancel();
      const outcome = await execution.result();
      expect(outcome.status).toBe('cancelled');
      expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskCancelledError);

      const [cancel] = sent('tasks/cancel');
      expect(cancel?.headers).toMatchObject({ 'mcp-method': 'tasks/cancel', 'mcp-name': taskId });
      expect(cancel?.response.result).toMatchObject({ resultType: 'complete' });
      expect(Object.keys(cancel?.response.result ?? {}).sort()).toEqual(['_meta', 'resultType']);

      // Cancellation is cooperative; the library stops locally on the ack. The server gets there too.
      const view = await pollUntil(
        () => session.task(taskId).snapshot(),
        (task) => task.status !== 'working',
      );
      expect(view).toMatchObject({ taskId, status: 'cancelled' });
    });
  });

  it('surfaces a tool error as a completed outcome with isError: true', async () => {
    await withConnection({}, async ({ session }) => {
      const execution = await session.callTool('failing_job', {}, CALL);
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      expect(resultFromTaskOutcome(outcome)).toEqual({
        content: [{ type: 'text', text: 'The job failed on purpose' }],
        isError: true,
        resultType: 'complete',
      });
      expect(outcome.task).toMatchObject({ status: 'completed', statusMessage: 'The job failed on purpose' });
    });
  });

  it('surfaces a failed task as TaskFailedError with the JSON-RPC code and data', async () => {
    await withConnection({}, async ({ session, sent }) => {
      const execution = await session.callTool('protocol_error_job', {}, CALL);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('failed');
      if (outcome.status !== 'failed') return;
      expect(outcome.error).toBeInstanceOf(TaskFailedError);
      expect(outcome.error).toMatchObject({
        message: 'The job hit a protocol error on purpose',
        code: -32603,
        data: { reason: 'simulated' },
      });
      expect(outcome.task).toMatchObject({ status: 'failed' });
      expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskFailedError);
      const failed = sent('tasks/get').at(-1)?.response.result;
      expect(failed).toMatchObject({
        resultType: 'complete',
        status: 'failed',
        error: { code: -32603, message: 'The job hit a protocol error on purpose', data: { reason: 'simulated' } },
      });
      expect(failed).not.toHaveProperty('result');
    });
  });

  it('surfaces JSON-RPC errors on the call and on tasks/get as JsonRpcResponseError', async () => {
    await withConnection({}, async ({ session }) => {
      const unknownTool = await session.callTool('no_such_tool', {}, CALL).catch((error: unknown) => error);
      expect(unknownTool).toBeInstanceOf(JsonRpcResponseError);
      expect((unknownTool as JsonRpcResponseError).code).toBe(-32602);

      const unknownTask = await session
        .task(toTaskId('no-such-task'))
        .snapshot()
        .catch((error: unknown) => error);
      expect(unknownTask).toBeInstanceOf(JsonRpcResponseError);
      expect((unknownTask as JsonRpcResponseError).code).toBe(-32602);
    });
  });

  it('leaves Mcp-Name on tools/call to the host: without it our server answers -32020', async () => {
    await withConnection({ nameToolCalls: false }, async ({ session, sent }) => {
      const error = await session.callTool('slow_compute', { seconds: 0, label: 'x' }, CALL).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JsonRpcResponseError);
      expect((error as JsonRpcResponseError).code).toBe(-32020);
      const [call] = sent('tools/call');
      expect(call?.status).toBe(400);
      expect(call?.headers).not.toHaveProperty('mcp-name');
    });
  });
});
