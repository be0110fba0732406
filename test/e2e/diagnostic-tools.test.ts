/**
 * What the conformance fixture's diagnostic tools show of the server, checked with our own
 * requests next to the official scenarios (test/conformance): a tool that needs a client
 * capability the caller did not declare is refused (`-32021`, HTTP 400 on 2026-07-28); an inline
 * call's `ctx.log` lines reach a client that asked for them; and a 2026-07-28 request stream
 * carries the call's own result only: no `notifications/message` for a request without a log
 * level, and a question as an `input_required` result, never as a request.
 */
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { connectV1, type RunningServer, rpc2026, startServer, TASKS_EXTENSION } from './support.js';

let running: RunningServer;

beforeAll(async () => {
  running = await startServer(app);
});

afterAll(async () => {
  await running?.close();
});

/** Every JSON-RPC message the response to one 2026-07-28 request carries, in order. */
async function streamOf(
  name: string,
  capabilities: Record<string, unknown>,
  meta: Record<string, unknown> = {},
): Promise<{ status: number; messages: Record<string, unknown>[] }> {
  const response = await fetch(running.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      // Asking for a stream first, so that anything the server would send before the result shows.
      accept: 'text/event-stream, application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name,
        arguments: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': capabilities,
          ...meta,
        },
      },
    }),
  });
  const text = await response.text();
  const messages = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
        .map((line) => JSON.parse(line.slice(5)))
    : [JSON.parse(text)];
  return { status: response.status, messages };
}

describe('a tool that needs a client capability (requiresClientCapabilities)', () => {
  it('2026-07-28: -32021 with HTTP 400, naming the capability as a ClientCapabilities object', async () => {
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'test_missing_capability', arguments: {} },
      { capabilities: { elicitation: {} } },
    );
    expect(reply.status).toBe(400);
    expect(reply.error).toMatchObject({
      code: -32021,
      message: expect.stringContaining("'sampling'"),
      data: { requiredCapabilities: { sampling: {} } },
    });
  });

  it('2026-07-28: the tasks extension does not stand in for it, and declaring it lets the call run', async () => {
    const withTasksOnly = await rpc2026(running.url, 'tools/call', { name: 'test_missing_capability', arguments: {} });
    expect(withTasksOnly.error?.code).toBe(-32021);
    const declared = await rpc2026(
      running.url,
      'tools/call',
      { name: 'test_missing_capability', arguments: {} },
      { capabilities: { sampling: {}, extensions: { [TASKS_EXTENSION]: {} } } },
    );
    expect(declared.status).toBe(200);
    expect(declared.result).toMatchObject({ content: [{ type: 'text', text: 'The client declared sampling' }] });
  });

  it('2025-11-25: judged by what the session declared', async () => {
    const without = await connectV1(running.url);
    const withSampling = await connectV1(running.url, { capabilities: { sampling: {} } });
    try {
      await expect(
        without.request(
          { method: 'tools/call', params: { name: 'test_missing_capability', arguments: {} } },
          CallToolResultSchema,
        ),
      ).rejects.toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
      const result = await withSampling.request(
        { method: 'tools/call', params: { name: 'test_missing_capability', arguments: {} } },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'The client declared sampling' }]);
    } finally {
      await without.close();
      await withSampling.close();
    }
  });

  it('a tool that needs nothing is not refused for a client that declared nothing', async () => {
    const reply = await rpc2026(
      running.url,
      'tools/call',
      { name: 'greet', arguments: { name: 'x' } },
      { capabilities: {} },
    );
    expect(reply.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, x!' }] });
  });
});

describe('ctx.log of an inline call reaches a client that asked for it', () => {
  const logLevel = (level: string) => ({ 'io.modelcontextprotocol/logLevel': level });
  const logged = (messages: Record<string, unknown>[]) =>
    messages.filter((message) => message.method === 'notifications/message').map((message) => message.params);

  it("2026-07-28: the request's log level is the threshold, and levels map to MCP names", async () => {
    const all = await streamOf('test_logging_tool', {}, logLevel('debug'));
    expect(logged(all.messages)).toEqual([
      { level: 'debug', data: 'test_logging_tool: debug', logger: 'test_logging_tool' },
      { level: 'info', data: 'test_logging_tool: info', logger: 'test_logging_tool' },
      { level: 'warning', data: 'test_logging_tool: warn', logger: 'test_logging_tool' },
      { level: 'error', data: 'test_logging_tool: error', logger: 'test_logging_tool' },
    ]);
    const some = await streamOf('test_logging_tool', {}, logLevel('warning'));
    expect(logged(some.messages).map((params) => (params as { level: string }).level)).toEqual(['warning', 'error']);
    // The call's result still comes last.
    expect(some.messages.at(-1)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
  });

  it("2025-11-25: the session's logging/setLevel is the threshold", async () => {
    const client = await connectV1(running.url);
    const heard: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      heard.push(notification.params);
    });
    try {
      await client.setLoggingLevel('warning');
      await client.callTool({ name: 'test_logging_tool', arguments: {} });
      expect(heard).toEqual([
        { level: 'warning', data: 'test_logging_tool: warn', logger: 'test_logging_tool' },
        { level: 'error', data: 'test_logging_tool: error', logger: 'test_logging_tool' },
      ]);
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28: a request stream carries the call and nothing else', () => {
  it('no notifications/message for a request without a log level, though the tool logs', async () => {
    const { status, messages } = await streamOf('test_logging_tool', {});
    expect(status).toBe(200);
    expect(messages.filter((message) => message.method === 'notifications/message')).toEqual([]);
    expect(messages).toEqual([
      expect.objectContaining({
        id: 7,
        result: expect.objectContaining({ content: [{ type: 'text', text: 'Logged four lines on the server' }] }),
      }),
    ]);
  });

  it('a question comes back as the input_required result, with no request of its own on the stream', async () => {
    const { messages } = await streamOf('test_streaming_elicitation', { elicitation: {} });
    expect(messages.filter((message) => typeof message.method === 'string')).toEqual([]);
    expect(messages).toEqual([
      expect.objectContaining({
        id: 7,
        result: expect.objectContaining({
          resultType: 'input_required',
          inputRequests: { confirmation: expect.objectContaining({ method: 'elicitation/create' }) },
        }),
      }),
    ]);
  });
});

describe('2026-07-28: an unsupported protocol version', () => {
  it('-32022 with HTTP 400, listing the supported versions and echoing the requested one', async () => {
    const reply = await rpc2026(
      running.url,
      'server/discover',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      { headers: { 'mcp-protocol-version': 'v999.0.0' } },
    );
    expect(reply.status).toBe(400);
    expect(reply.error).toMatchObject({
      code: -32022,
      data: { supported: expect.arrayContaining(['2026-07-28']), requested: 'v999.0.0' },
    });
  });
});

describe('json_schema_2020_12_tool: a schema written by hand', () => {
  it('is listed as written on both revisions', async () => {
    const reply = await rpc2026(running.url, 'tools/list');
    const tools = (reply.result?.tools ?? []) as { name: string; inputSchema: Record<string, unknown> }[];
    const modern = tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    expect(modern?.inputSchema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { address: { $anchor: 'addressDef' } },
      additionalProperties: false,
      if: expect.any(Object),
      // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword.
      then: expect.any(Object),
      else: expect.any(Object),
    });
    const client = await connectV1(running.url);
    try {
      const legacy = (await client.listTools()).tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
      expect(legacy?.inputSchema).toEqual(modern?.inputSchema);
    } finally {
      await client.close();
    }
  });

  it('checks a call against the same rules: -32602 naming what is missing, else the answer', async () => {
    const missing = await rpc2026(running.url, 'tools/call', {
      name: 'json_schema_2020_12_tool',
      arguments: { name: 'Ada', contactMethod: 'phone', email: 'ada@example.com' },
    });
    expect(missing.error).toMatchObject({ code: -32602, message: expect.stringContaining('phone') });
    const extra = await rpc2026(running.url, 'tools/call', {
      name: 'json_schema_2020_12_tool',
      arguments: { email: 'ada@example.com', fax: '1' },
    });
    expect(extra.error).toMatchObject({ code: -32602, message: expect.stringContaining('fax') });
    const ok = await rpc2026(running.url, 'tools/call', {
      name: 'json_schema_2020_12_tool',
      arguments: { name: 'Ada', address: { city: 'London' }, contactMethod: 'phone', phone: '+44 1' },
    });
    expect(ok.result).toMatchObject({
      content: [{ type: 'text', text: 'Ada in London will be reached by phone at +44 1' }],
    });
  });
});
