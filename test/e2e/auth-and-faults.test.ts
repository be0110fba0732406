/**
 * Authenticated principals through the `http.auth` option (a real bearer verifier), and what a
 * client sees when the task store is unreachable: a clear JSON-RPC error, no crash.
 */

import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, type RunningServer, rpc2026, startServer } from './support.js';

const TOKENS: Record<string, string> = { 'token-alice': 'alice', 'token-bob': 'bob' };

describe('bearer authentication with a token verifier', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      http: {
        auth: {
          verifier: {
            async verifyAccessToken(token) {
              const subject = TOKENS[token];
              if (!subject) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown token');
              const expiresAt = Math.floor(Date.now() / 1000) + 3600;
              return { token, clientId: 'e2e-client', scopes: ['mcp'], expiresAt, extra: { sub: subject } };
            },
          },
        },
      },
    });
  });

  afterAll(() => running?.close());

  it('refuses requests without a valid token with 401', async () => {
    expect((await rpc2026(running.url, 'server/discover')).status).toBe(401);
    const response = await fetch(running.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer forged' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/Bearer/);
  });

  it("binds tasks to the token's subject: listing for the owner, not-found for anyone else", async () => {
    const alice = await connectV1(running.url, { token: 'token-alice' });
    expect(alice.getServerCapabilities()?.tasks?.list).toEqual({});
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'auth' }, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await alice.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Computed auth in 0s' }]);
    expect((await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(created.task.taskId);
    const bob = await connectV1(running.url, { token: 'token-bob' });
    await expect(bob.experimental.tasks.getTask(created.task.taskId)).rejects.toMatchObject({ code: -32602 });
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
    await Promise.all([alice.close(), bob.close()]);
  });
});

describe('Redis unreachable', () => {
  let running: RunningServer;

  beforeAll(async () => {
    // Nothing listens on port 1: every Redis call fails at once.
    running = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      redis: { connection: 'redis://127.0.0.1:1', prefix: 'unreachable' },
      workers: 0,
    });
  });

  afterAll(() => running?.close());

  it('answers task calls with a JSON-RPC internal error naming the problem, and keeps serving', async () => {
    const client = await connectV1(running.url);
    const started = Date.now();
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'x' }, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/Redis|task runtime|unavailable/i) });
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(client.experimental.tasks.getTask('any')).rejects.toMatchObject({ code: -32603 });
    // The same on the 2026-07-28 wire (C-58).
    const modern = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'y' },
    });
    expect(modern.error?.code).toBe(-32603);
    // Tools that need no task store still work.
    expect(await client.callTool({ name: 'greet', arguments: { name: 'still here' } })).toMatchObject({
      content: [{ type: 'text', text: 'Hello, still here!' }],
    });
    await client.close();
  });
});
