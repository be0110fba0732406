/**
 * Every wait ends: a blocking `tasks/result` and a listen stream on a task whose TTL runs out
 * hear so (on both runtimes), a client that hangs up leaves no waiter behind, and streams that
 * missed events while the server's Redis connection was cut catch up, each terminal state once.
 */
import { CreateTaskResultSchema, McpError, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { silentLogger } from '../../src/observe/logger.js';
import { TaskWorker } from '../../src/runtime/bullmq/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix, redisAvailable } from '../bullmq/support.js';
import { sleep } from '../contract/runtime-contract.js';
import { redisAddress, startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import {
  connectV1,
  listenForTasks,
  openRawSession,
  pollUntil,
  type RunningServer,
  rpc2026,
  startServer,
} from './support.js';

const AnyResult = z.looseObject({});
const app = { manifest: taskManifest, instances: [new FixtureTools(), new GeneralTools()] };

/** How long a wait may take to hear of an expiry 2 s away: generous, and far below "never". */
const EXPIRY_HEARD_WITHIN_MS = 10_000;

function describeExpiry(name: string, start: () => Promise<RunningServer>, needsRedis: boolean): void {
  const suite = needsRedis ? describeWithRedis : describe;
  suite(`expiry is an event: ${name}`, () => {
    let running: RunningServer;
    beforeAll(async () => {
      running = await start();
    });
    afterAll(() => running?.close());

    it('answers a blocking tasks/result with -32602 once the task expires before it ends', async () => {
      const client = await connectV1(running.url);
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 30, label: 'outlived' }, task: { ttl: 2000 } },
        },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      const outcome = await Promise.race([
        client.request({ method: 'tasks/result', params: { taskId } }, AnyResult, { timeout: 60_000 }).then(
          () => 'answered with a result',
          (error: unknown) => (error instanceof McpError ? error.code : String(error)),
        ),
        sleep(EXPIRY_HEARD_WITHIN_MS).then(() => 'no answer'),
      ]);
      expect(outcome).toBe(-32602);
      await expect(client.request({ method: 'tasks/get', params: { taskId } }, AnyResult)).rejects.toMatchObject({
        code: -32602,
      });
      expect(running.server.stats().waiters.total).toEqual({ result: 0, stream: 0 });
      await client.close();
    });

    it('gives a listen stream its last word on a task that expires, and ends the stream after the last task', async () => {
      const created = await rpc2026(running.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 30, label: 'listened' },
        _meta: {},
      });
      const taskId = created.result?.taskId as string;
      // The fixture's tool keeps its tasks 10 minutes; a 2026 client cannot ask for less, so this
      // task is made short-lived through 2025, then followed from 2026.
      const client = await connectV1(running.url);
      const short = await client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 30, label: 'short' }, task: { ttl: 2000 } },
        },
        CreateTaskResultSchema,
      );
      const { stream } = await listenForTasks(running.url, [short.task.taskId, taskId], { id: 4242 });
      if (!stream) throw new Error('no listen stream');
      await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged');
      const last = await stream.next(
        (m) =>
          (m.params as { taskId?: string; status?: string }).taskId === short.task.taskId &&
          (m.params as { status?: string }).status === 'failed',
        EXPIRY_HEARD_WITHIN_MS,
      );
      expect(last.params).toMatchObject({
        status: 'failed',
        statusMessage: 'Task has expired',
        error: { code: -32602 },
      });
      await pollUntil(
        async () => running.server.stats().engine.followedTasks,
        (followed) => followed === 1,
      );
      expect(running.server.stats().waiters.total.stream).toBe(1);
      // The other task's end is the stream's last word: the server ends the subscription with the
      // listen request's result and closes the stream, with no client hanging up.
      await rpc2026(running.url, 'tasks/cancel', { taskId });
      const rest = await stream.rest();
      // Progress of the working task may come first; its cancellation is the last notification.
      expect(rest.at(-2)?.params).toMatchObject({ taskId, status: 'cancelled' });
      expect(rest.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: 4242,
        result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 4242 } },
      });
      await pollUntil(
        async () => running.server.stats(),
        (stats) => stats.waiters.total.stream === 0 && stats.engine.followedTasks === 0,
      );
      await client.close();
    });

    it('ends a listen stream at once when no task it asked for can say anything more', async () => {
      const done = await rpc2026(running.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0, label: 'already-done' },
      });
      const doneId = done.result?.taskId as string;
      await pollUntil(
        () => rpc2026(running.url, 'tasks/get', { taskId: doneId }),
        (reply) => reply.result?.status === 'completed',
      );
      const { stream } = await listenForTasks(running.url, [doneId, 'not-a-task'], { id: 7 });
      if (!stream) throw new Error('no listen stream');
      const rest = await stream.rest();
      expect(rest.map((message) => message.method ?? 'result')).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/tasks',
        'result',
      ]);
      expect(rest[1]?.params).toMatchObject({ taskId: doneId, status: 'completed' });
      const nothing = await listenForTasks(running.url, ['not-a-task'], { id: 8 });
      expect((await nothing.stream?.rest())?.map((message) => message.method ?? 'result')).toEqual([
        'notifications/subscriptions/acknowledged',
        'result',
      ]);
      await pollUntil(
        async () => running.server.stats().waiters.total.stream,
        (streams) => streams === 0,
      );
    });
  });
}

describeExpiry('in process', () => startServer(app), false);
describeExpiry(
  'BullMQ',
  async () => {
    const prefix = randomPrefix();
    const running = await startServer({ ...app, redis: { connection: REDIS_URL, prefix }, workers: 4 });
    return {
      ...running,
      close: async () => {
        await running.close();
        await deleteKeysUnder(prefix);
      },
    };
  },
  true,
);

describe('waiters die with their request', () => {
  let running: RunningServer;
  beforeAll(async () => {
    // Room for a batch of 200 waits at once from one caller, and for 2,000 reads in seconds.
    running = await startServer({
      ...app,
      limits: { maxBlockingResultsPerPrincipal: 250, readsPerSecond: 10_000, readBurst: 10_000 },
    });
  });
  afterAll(() => running?.close());

  it('leaves no waiter behind after 2,000 blocking tasks/result calls whose clients hung up', async () => {
    const session = await openRawSession(running.url);
    const created = await rpc2026(running.url, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 120, label: 'waited-on' },
    });
    const taskId = created.result?.taskId as string;
    const batch = 200;
    let id = 1;
    for (let round = 0; round < 2000 / batch; round++) {
      const controllers = Array.from({ length: batch }, () => new AbortController());
      // Held, so the garbage collector cannot close a response early: the client hangs up below.
      const responses: Response[] = [];
      const calls = controllers.map((controller) =>
        fetch(running.url, {
          method: 'POST',
          headers: session,
          signal: controller.signal,
          body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tasks/result', params: { taskId } }),
        }).then(
          (response) => {
            responses.push(response);
          },
          () => {},
        ),
      );
      // Every call is waiting on the task before its client hangs up.
      await pollUntil(
        async () => running.server.stats().waiters.total.result,
        (waiting) => waiting === batch,
        30_000,
      );
      for (const controller of controllers) controller.abort();
      await Promise.all(calls);
      responses.length = 0;
      await pollUntil(
        async () => running.server.stats(),
        (stats) => stats.waiters.total.result === 0 && stats.engine.waiters === 0,
        30_000,
      );
    }
    expect(running.server.stats().waiters).toEqual({ total: { result: 0, stream: 0 }, sessions: {} });
    expect(running.server.stats().engine).toMatchObject({ waiters: 0 });
    await rpc2026(running.url, 'tasks/cancel', { taskId });
  }, 120_000);
});

describeWithRedis('streams survive a gap in the server’s Redis connection', () => {
  const prefix = randomPrefix();
  let proxy: TcpProxy;
  let running: RunningServer;
  let worker: TaskWorker;

  beforeAll(async () => {
    proxy = await startTcpProxy(redisAddress(REDIS_URL));
    // The server reaches Redis through the proxy and runs no tasks; the worker goes straight to
    // Redis, so tasks keep ending while the server is cut off and their events are lost to it.
    running = await startServer({ ...app, redis: { connection: proxy.url, prefix }, workers: 0 });
    worker = new TaskWorker({
      connection: REDIS_URL,
      prefix,
      executor: new ToolRegistry(app),
      concurrency: 20,
      logger: silentLogger,
    });
    await worker.started;
  });

  afterAll(async () => {
    await running?.close();
    await worker?.close();
    await proxy?.close();
    if (redisAvailable) await deleteKeysUnder(prefix);
  });

  it('sends every followed task’s terminal state once, on a 2026 listen stream and by 2025 status push', async () => {
    const client = await connectV1(running.url);
    const terminal2025 = new Map<string, number>();
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      if (['completed', 'failed', 'cancelled'].includes(n.params.status)) {
        terminal2025.set(n.params.taskId, (terminal2025.get(n.params.taskId) ?? 0) + 1);
      }
    });
    const ids: string[] = [];
    for (let index = 0; index < 14; index++) {
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 1, label: `gap-${index}` }, task: {} },
        },
        CreateTaskResultSchema,
      );
      ids.push(created.task.taskId);
    }
    const { stream } = await listenForTasks(running.url, ids);
    if (!stream) throw new Error('no listen stream');
    await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged');

    // Cut the server off for longer than the tasks take: they end while it hears nothing.
    proxy.cut();
    await sleep(3000);
    proxy.restore();

    const terminal2026 = new Map<string, number>();
    for (const taskId of ids) {
      await stream.next(
        (m) =>
          (m.params as { taskId?: string }).taskId === taskId &&
          (m.params as { status?: string }).status === 'completed',
        15_000,
      );
      terminal2026.set(taskId, 1);
    }
    await pollUntil(
      async () => terminal2025.size,
      (size) => size === ids.length,
      15_000,
    );
    // Whatever arrives late must not be a second terminal notification: once every task has
    // had its last word the server ends the stream, and nothing but its result is left.
    const rest = await stream.rest();
    expect(rest.filter((m) => (m.params as { status?: string } | undefined)?.status === 'completed')).toEqual([]);
    expect(rest.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    expect([...terminal2025.values()]).toEqual(ids.map(() => 1));
    expect(terminal2026.size).toBe(ids.length);
    stream.close();
    await client.close();
  }, 60_000);
});
