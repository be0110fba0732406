/**
 * Review probes on 2025-11-25 sessions without tasks: hang-ups mid task_wait, and a question
 * relayed during the grace wait to a person who takes longer than the grace time.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, openRawSession, pollUntil, type RunningServer, startServer } from './support.js';

const principalFromBearer = ({ headers }: { headers?: Headers }) =>
  headers?.get('authorization')?.replace(/^Bearer /, '') ?? null;

let running: RunningServer;
beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    resolvePrincipal: principalFromBearer,
    unawareClients: { graceMs: 1500 },
  });
});
afterAll(() => running?.close());

describe('2025-11-25 without tasks', () => {
  it('a task_wait dropped by its client leaves no waiter and no blocking slot', async () => {
    const client = await connectV1(running.url, { token: 'gina' });
    const handle = await client.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'w' } });
    const taskId = (handle.structuredContent as { taskId: string }).taskId;
    const session = await openRawSession(running.url, { headers: { authorization: 'Bearer gina' } });
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
      async () => running.server.stats().waiters.total.result,
      (n) => n === 1,
    );
    controller.abort();
    await wait;
    await pollUntil(
      async () => running.server.stats().waiters.total.result,
      (n) => n === 0,
      2000,
    );
    await client.callTool({ name: 'task_cancel', arguments: { taskId } });
    await client.close();
  });
});
