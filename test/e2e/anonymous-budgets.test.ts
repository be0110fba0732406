/**
 * Callers nothing identifies hold their blocking waits and their live tasks against the budget
 * of their address (behind a trusted proxy, the address it forwards), not against one budget
 * all anonymous callers share: one client at its cap does not lock out another. A client cannot
 * buy a fresh budget by sending `X-Forwarded-For` itself when no proxy is trusted. The live-task
 * quota runs on both runtimes (it is kept with the tasks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { TaskError } from '../../src/engine/errors.js';
import type { SlotLedger } from '../../src/engine/slot-ledger.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { openRawSession, type RunningServer, readSseStream, rpc2026, type SseStream, startServer } from './support.js';

interface Wait {
  readonly stream: SseStream;
  /** The first message the wait answers with. */
  readonly reply: Promise<Record<string, unknown>>;
}

let nextId = 1;

/** A blocking 2025-11-25 `tasks/result` on `session`, left open (each with an id of its own: the session routes answers by id). */
async function blockingResult(url: string, session: Record<string, string>, taskId: string): Promise<Wait> {
  const id = nextId++;
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    signal: controller.signal,
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }),
  });
  const stream = readSseStream(response, controller);
  const reply = stream.next((message) => message.id === id, 15_000);
  // A wait closed at the end of the test never answers: not an unhandled rejection.
  reply.catch(() => {});
  return { stream, reply };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('blocking waits of anonymous callers, by address', () => {
  let server: RunningServer;
  const waits: Wait[] = [];

  beforeAll(async () => {
    server = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      limits: { maxBlockingResultsPerPrincipal: 1 },
      http: { trustProxy: 'loopback' },
    });
  });
  afterAll(async () => {
    for (const wait of waits) wait.stream.close();
    await server?.close();
  });

  it('gives each forwarded address its own cap', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const [sessionX, sessionY] = await Promise.all([
      openRawSession(server.url, { headers: from('203.0.113.5') }),
      openRawSession(server.url, { headers: from('203.0.113.6') }),
    ]);
    const created = await rpc2026(server.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30, label: 'anon' },
    });
    const taskId = created.result?.taskId as string;
    const track = (wait: Wait) => {
      waits.push(wait);
      return wait;
    };

    const x1 = track(await blockingResult(server.url, sessionX, taskId));
    await settle();
    // X's one slot is held: its next wait is refused.
    const x2 = track(await blockingResult(server.url, sessionX, taskId));
    expect(await x2.reply).toMatchObject({
      error: { code: -32010, data: { limit: 'maxBlockingResultsPerPrincipal' } },
    });
    // Y is another client: its wait is let in, and then its own cap is full.
    const y1 = track(await blockingResult(server.url, sessionY, taskId));
    await settle();
    const y2 = track(await blockingResult(server.url, sessionY, taskId));
    expect(await y2.reply).toMatchObject({ error: { code: -32010 } });

    // Both held waits end with the task, not with a refusal.
    await rpc2026(server.url, 'tasks/cancel', { taskId });
    for (const wait of [x1, y1]) {
      const reply = await wait.reply;
      expect((reply.error as { code?: number } | undefined)?.code).not.toBe(-32010);
    }
  });
});

/** A 2026-07-28 create of a task that runs for 30 s, from `address` (forwarded by the trusted loopback proxy). */
const createFrom = (url: string, address: string | undefined) =>
  rpc2026(
    url,
    'tools/call',
    { name: 'slow_compute', arguments: { seconds: 30, label: 'live' } },
    { headers: address === undefined ? {} : { 'x-forwarded-for': address } },
  );

function liveTaskQuotaByAddress(setup: () => { redis?: { connection: string; prefix: string } }): void {
  let server: RunningServer;
  let prefix: string | undefined;

  beforeAll(async () => {
    const { redis } = setup();
    prefix = redis?.prefix;
    server = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      limits: { maxLiveTasksPerPrincipal: 1 },
      http: { trustProxy: 'loopback' },
      ...(redis && { redis }),
    });
  });
  afterAll(async () => {
    await server?.close();
    if (prefix) await deleteKeysUnder(prefix);
  });

  it('gives each forwarded address its own live-task quota', async () => {
    const first = await createFrom(server.url, '203.0.113.5');
    expect(first.result?.taskId).toBeTypeOf('string');
    const over = await createFrom(server.url, '203.0.113.5');
    expect(over.error).toMatchObject({ code: -32010, data: { limit: 'maxLiveTasksPerPrincipal', value: 1 } });
    // Another client, another budget; the same /64 of IPv6 is one client.
    const other = await createFrom(server.url, '203.0.113.6');
    expect(other.result?.taskId).toBeTypeOf('string');
    const v6 = await createFrom(server.url, '2001:db8::1');
    expect(v6.result?.taskId).toBeTypeOf('string');
    expect((await createFrom(server.url, '2001:db8::2')).error).toMatchObject({ code: -32010 });
    // The quota frees with the task: a cancel gives the room back.
    await rpc2026(server.url, 'tasks/cancel', { taskId: first.result?.taskId as string });
    const again = await createFrom(server.url, '203.0.113.5');
    expect(again.result?.taskId).toBeTypeOf('string');
    for (const reply of [other, v6, again]) {
      await rpc2026(server.url, 'tasks/cancel', { taskId: reply.result?.taskId as string });
    }
  });
}

describe('live tasks of anonymous callers, by address, in process', () => {
  liveTaskQuotaByAddress(() => ({}));
});

describeWithRedis('live tasks of anonymous callers, by address, on BullMQ', () => {
  liveTaskQuotaByAddress(() => ({ redis: { connection: REDIS_URL, prefix: randomPrefix() } }));
});

describe('a slot ledger that cannot count', () => {
  let server: RunningServer;
  const failing: SlotLedger = {
    scope: 'app',
    take: async () => {
      throw new TaskError('RUNTIME_UNAVAILABLE', 'The task store (Redis) did not answer within 3000 ms');
    },
    hold: async () => {
      throw new TaskError('RUNTIME_UNAVAILABLE', 'The task store (Redis) did not answer within 3000 ms');
    },
    held: async () => 0,
    close: async () => {},
  };

  beforeAll(async () => {
    server = await startServer({
      manifest: taskManifest,
      instances: [new FixtureTools(), new GeneralTools()],
      runtime: (registry) => {
        const runtime = new MemoryTaskRuntime({ executor: registry });
        Object.defineProperty(runtime, 'slots', { value: failing });
        return runtime;
      },
      limits: { maxSessionsPerPrincipal: 1 },
    });
  });
  afterAll(() => server?.close());

  it('counts what it caps in this process instead, so the server keeps serving within that bound', async () => {
    const initialize = () =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        }),
      });
    const first = await initialize();
    expect(first.status).toBe(200);
    await first.body?.cancel();
    // maxSessionsPerPrincipal is 1: the second session of the same (anonymous) caller is over it.
    const second = await initialize();
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ error: { code: -32010 } });
  });
});
