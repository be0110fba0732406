/**
 * The kept 2026-07-28 request path (src/host/modern-request-path.ts): plain stateless calls of
 * two principals, in flight together on the same kept handlers, each see only their own
 * principal, headers, client capabilities and tasks. The principal resolver and the bearer
 * verifier wait a random while, so the calls' handlers interleave at every await. The count of
 * per-request protocol servers shows that the kept path served them (and that a call it does
 * not take still builds one).
 */
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import type { TaskServerOptions } from '../../src/host/task-server.js';
import { type RpcReply, type RunningServer, rpc2026, startServer, WITH_TASKS } from './support.js';

/** Protocol servers built for single 2026-07-28 requests (the SDK's per-request path). */
const built = vi.hoisted(() => ({ perRequest2026: 0, classified: 0 }));

/** The kept path's calls of the SDK's classifier (the SDK's own path calls its copy, not counted). */
vi.mock('@modelcontextprotocol/server', async (importOriginal) => {
  const original = await importOriginal<typeof import('@modelcontextprotocol/server')>();
  return {
    ...original,
    classifyInboundRequest: (...args: Parameters<typeof original.classifyInboundRequest>) => {
      built.classified++;
      return original.classifyInboundRequest(...args);
    },
  };
});

vi.mock('../../src/host/protocol-server.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/host/protocol-server.js')>();
  return {
    ...original,
    createProtocolServer: (...args: Parameters<typeof original.createProtocolServer>) => {
      if (args[1].revision === '2026-07-28') built.perRequest2026++;
      return original.createProtocolServer(...args);
    },
  };
});

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));

const auth: TaskServerOptions['http'] = {
  auth: {
    verifier: {
      async verifyAccessToken(token) {
        await pause();
        if (token !== 'alice' && token !== 'bob') throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown token');
        return { token, clientId: 'shared-client', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      },
    },
  },
};

/** The principal is the token, resolved late: every request's resolution overlaps another's. */
const resolvePrincipal: TaskServerOptions['resolvePrincipal'] = async (source) => {
  await pause();
  return source.authInfo ? `token:${source.authInfo.token}` : null;
};

const as = (token: string, headers: Record<string, string> = {}) => ({
  headers: { authorization: `Bearer ${token}`, ...headers },
});

describe('the kept 2026-07-28 path, two principals at once', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await startServer({ ...app, http: auth, resolvePrincipal });
  });

  afterAll(async () => {
    await running?.close();
  });

  it('keeps each call to its own principal, idempotency key and capabilities while they interleave', async () => {
    const before = built.perRequest2026;
    // Alice declares the tasks extension and gets tasks; Bob does not, and gets the result
    // inline (the tool answers within the unaware grace). Each sends two idempotency keys of its
    // own, ten times each: a call that read the other's header would start a task of its own.
    const calls = Array.from({ length: 40 }, (_, i) => {
      const alice = i % 2 === 0;
      const key = `${alice ? 'alice' : 'bob'}-key-${i % 4}`;
      return rpc2026(
        running.url,
        'tools/call',
        { name: 'slow_compute', arguments: { seconds: 0.02, label: alice ? 'alice' : 'bob' } },
        { ...as(alice ? 'alice' : 'bob', { 'idempotency-key': key }), capabilities: alice ? WITH_TASKS : {} },
      ).then((reply) => ({ alice, key, reply }));
    });
    const replies = await Promise.all(calls);

    const aliceTasks = new Map<string, string>();
    for (const { alice, key, reply } of replies) {
      expect(reply.status).toBe(200);
      if (alice) {
        expect(reply.result?.resultType).toBe('task');
        const taskId = reply.result?.taskId as string;
        // The same key from the same principal is the same task.
        expect(aliceTasks.get(key) ?? taskId).toBe(taskId);
        aliceTasks.set(key, taskId);
      } else {
        // Bob's calls never become Alice's tasks, nor tasks at all: he declared no extension.
        expect(reply.result?.resultType).toBe('complete');
        expect(JSON.stringify(reply.result?.content)).toContain('Computed bob');
      }
    }
    expect(aliceTasks.size).toBe(2);

    // Each task answers its owner, and is unknown to the other principal, read at the same time.
    const reads = [...aliceTasks.values()].flatMap((taskId) => [
      rpc2026(running.url, 'tasks/get', { taskId }, { ...as('alice'), capabilities: WITH_TASKS }).then(
        (reply) => ['alice', taskId, reply] as const,
      ),
      rpc2026(running.url, 'tasks/get', { taskId }, { ...as('bob'), capabilities: WITH_TASKS }).then(
        (reply) => ['bob', taskId, reply] as const,
      ),
      rpc2026(running.url, 'tasks/cancel', { taskId }, { ...as('bob'), capabilities: WITH_TASKS }).then(
        (reply) => ['bob', taskId, reply] as const,
      ),
    ]);
    for (const [who, taskId, reply] of await Promise.all(reads)) {
      if (who === 'alice') expect((reply as RpcReply).result?.taskId).toBe(taskId);
      else expect((reply as RpcReply).error?.code).toBe(-32602);
    }
    // Bob's cancels reached nothing.
    for (const taskId of aliceTasks.values()) {
      const reply = await rpc2026(running.url, 'tasks/get', { taskId }, { ...as('alice'), capabilities: WITH_TASKS });
      expect(reply.result?.status).not.toBe('cancelled');
    }
    // None of it built a server per request.
    expect(built.perRequest2026).toBe(before);
  });

  it('gives every answer of the kept path the stamps of the SDK path', async () => {
    const before = built.perRequest2026;
    const kept = await rpc2026(running.url, 'tools/call', { name: 'greet', arguments: { name: 'Ada' } }, as('alice'));
    expect(built.perRequest2026).toBe(before);
    // A call that asks for progress needs the SDK's event stream: it builds a server.
    const sdk = await rpc2026(
      running.url,
      'tools/call',
      { name: 'greet', arguments: { name: 'Ada' }, _meta: { progressToken: 'p1' } },
      as('alice'),
    );
    expect(built.perRequest2026).toBe(before + 1);
    expect(kept.status).toBe(sdk.status);
    expect(kept.result).toEqual(sdk.result);
    expect(kept.result?._meta).toEqual({
      'io.modelcontextprotocol/serverInfo': { name: app.name, version: app.version },
    });
  });

  it('refuses a task read without the tasks extension as the SDK path does (-32021, HTTP 400)', async () => {
    const created = await rpc2026(
      running.url,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'a' } },
      { ...as('alice'), capabilities: WITH_TASKS },
    );
    const taskId = created.result?.taskId as string;
    const before = built.perRequest2026;
    const kept = await rpc2026(running.url, 'tasks/get', { taskId }, { ...as('alice'), capabilities: {} });
    expect(built.perRequest2026).toBe(before);
    const sdk = await rpc2026(
      running.url,
      'tasks/get',
      { taskId, _meta: { progressToken: 'p2' } },
      { ...as('alice'), capabilities: {} },
    );
    expect(built.perRequest2026).toBe(before + 1);
    expect(kept.status).toBe(400);
    expect(kept.status).toBe(sdk.status);
    expect(kept.error).toEqual(sdk.error);
  });
  it('answers a plain call in one write with its Content-Length, not a chunked body', async () => {
    const response = await post(running.url, { name: 'greet', arguments: { name: 'Ada' } }, meta('one-write'), 'alice');
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('transfer-encoding')).toBeNull();
    expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text).result.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
  });

  it("asks the SDK's classifier once per distinct _meta, and sends what it refused to the SDK every time", async () => {
    const before = { ...built };
    const params = { name: 'greet', arguments: { name: 'Ada' } };
    for (let i = 0; i < 5; i++) expect((await post(running.url, params, meta('repeat'), 'alice')).status).toBe(200);
    expect(built.classified - before.classified).toBe(1);
    expect(built.perRequest2026).toBe(before.perRequest2026);
    // An envelope the SDK refuses (no clientInfo version): the SDK's answer both times.
    const refused = { ...meta('refused'), 'io.modelcontextprotocol/clientInfo': { name: 'no-version' } };
    const first = await post(running.url, params, refused, 'alice');
    const again = await post(running.url, params, refused, 'alice');
    expect(first.status).toBe(400);
    const [a, b] = [await first.json(), await again.json()];
    expect(again.status).toBe(first.status);
    expect({ ...b, id: a.id }).toEqual(a);
    expect(a.error.message).toContain('clientInfo');
  });

  it('judges a long _meta, or one with null in its text, every time: 1e400 (Infinity) is no null', async () => {
    const params = { name: 'greet', arguments: { name: 'Ada' } };
    const long = meta(`long-${'x'.repeat(3000)}`);
    const before = built.classified;
    for (let i = 0; i < 3; i++) expect((await post(running.url, params, long, 'alice')).status).toBe(200);
    expect(built.classified - before).toBe(3);
    // The same envelope text once the body is parsed and written again: `null` the SDK takes,
    // then `1e400`, which it refuses, in the same place.
    const withValue = (value: string) =>
      JSON.stringify(meta('infinite')).replace(
        'clientCapabilities":{"extensions":{',
        `clientCapabilities":{"extensions":{"x.example/y":{"z":${value}},`,
      );
    expect(withValue('1')).not.toBe(JSON.stringify(meta('infinite')));
    expect((await postRaw(running.url, params, withValue('null'), 'alice')).status).toBe(200);
    const infinite = await postRaw(running.url, params, withValue('1e400'), 'alice');
    const alone = await postRaw(running.url, params, withValue('1e400'), 'alice');
    expect(alone.status).toBe(infinite.status);
    expect(infinite.status).toBe(400);
  });

  it('sends a body with a member beyond the JSON-RPC request to the SDK, even with an envelope it took', async () => {
    const params = { name: 'greet', arguments: { name: 'Ada' } };
    const unseen = await post(running.url, params, meta('extra-first'), 'alice', { extra: 1 });
    expect((await post(running.url, params, meta('extra-seen'), 'alice')).status).toBe(200);
    const seen = await post(running.url, params, meta('extra-seen'), 'alice', { extra: 1 });
    expect(unseen.status).toBe(400);
    const [a, b] = [await unseen.json(), await seen.json()];
    expect({ ...b, id: a.id }).toEqual(a);
    expect(seen.status).toBe(unseen.status);
  });
});

/** The envelope of a 2026-07-28 request from a client named `client`, declaring the tasks extension. */
function meta(client: string): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': WITH_TASKS,
  };
}

let nextPostId = 1;

/** `post` with the `_meta` as its JSON text, written into the body as it is. */
function postRaw(
  url: string,
  params: { name: string; arguments?: unknown },
  metaText: string,
  token: string,
): Promise<Response> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextPostId++,
    method: 'tools/call',
    params: { ...params, _meta: 0 },
  });
  return postText(url, params.name, token, body.replace('"_meta":0', `"_meta":${metaText}`));
}

/** A `tools/call` POSTed as it is: `params` with `_meta`, and `members` beside `jsonrpc`, `id`, `method`. */
function post(
  url: string,
  params: { name: string; arguments?: unknown },
  _meta: Record<string, unknown>,
  token: string,
  members: Record<string, unknown> = {},
): Promise<Response> {
  const body = { jsonrpc: '2.0', id: nextPostId++, method: 'tools/call', params: { ...params, _meta }, ...members };
  return postText(url, params.name, token, JSON.stringify(body));
}

/** A 2026-07-28 `tools/call` of tool `name` with `body` as its text, and the headers that go with it. */
function postText(url: string, name: string, token: string, body: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body,
  });
}
