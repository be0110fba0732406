/**
 * The conformance fixture on the BullMQ runtime as it is deployed: two server processes that
 * run no tasks (WORKERS=0) and two worker processes, sharing one Redis, and again on a local
 * three-master Redis Cluster with three shards (`REDIS_CLUSTER_NODES`, `TASK_SHARDS`). A task
 * created through one server is polled, cancelled and collected through the other, in both
 * dialects, and survives a server restart.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { describeWithClusterBinaries, type LocalCluster, startLocalCluster } from '../cluster/local-cluster.js';
import { sleep } from '../contract/runtime-contract.js';
import { type AppProcess, startAppProcess } from './processes.js';
import { connectV1, listenForTasks, pollUntil, rpc2026 } from './support.js';

/** Four processes compile the sources as they start: slow on a busy two-core machine. */
const START_MS = 60_000;

/**
 * How long the workers hold a run that asked before parking it (`WORKER_INPUT_GRACE_MS`), and
 * how long the tests wait past a question before answering: well beyond it, so the run has
 * certainly parked, left its worker, and must be replayed from the top through the registry.
 */
const PARK_MS = 100;
const PARKED_AFTER_MS = 1000;

/** Where the processes find Redis (their environment), and how to clean up after them. */
interface Deployment {
  readonly env: Record<string, string>;
  dispose(): Promise<void>;
}

describeWithRedis('servers and workers in separate processes', () => {
  describeMultiProcess(async () => {
    const prefix = randomPrefix();
    return { env: { REDIS_URL, REDIS_PREFIX: prefix }, dispose: () => deleteKeysUnder(prefix) };
  });
});

describeWithClusterBinaries('servers and workers in separate processes on Redis Cluster, 3 shards', () => {
  describeMultiProcess(async () => {
    const cluster: LocalCluster = await startLocalCluster(3);
    // REDIS_URL emptied: the processes inherit this environment, and the two must not both be set.
    const env = {
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: cluster.nodeList,
      TASK_SHARDS: '3',
      REDIS_PREFIX: randomPrefix(),
    };
    return { env, dispose: () => cluster.stop() };
  });
});

function describeMultiProcess(deploy: () => Promise<Deployment>): void {
  let deployment: Deployment | undefined;
  let env: Record<string, string>;
  const processes: AppProcess[] = [];
  const clients: Client[] = [];
  let serverA: AppProcess;
  let serverB: AppProcess;

  beforeAll(async () => {
    deployment = await deploy();
    env = deployment.env;
    const started = await Promise.all([
      // A question parks its job after 100 ms (PARK_MS): the answers below always come to a parked task.
      startAppProcess(
        'conformance-fixture',
        'worker',
        { ...env, WORKERS: '4', WORKER_INPUT_GRACE_MS: String(PARK_MS) },
        START_MS,
      ),
      startAppProcess(
        'conformance-fixture',
        'worker',
        { ...env, WORKERS: '4', WORKER_INPUT_GRACE_MS: String(PARK_MS) },
        START_MS,
      ),
      startAppProcess('conformance-fixture', 'server', { ...env, WORKERS: '0' }, START_MS),
      startAppProcess('conformance-fixture', 'server', { ...env, WORKERS: '0' }, START_MS),
    ]);
    processes.push(...started);
    [, , serverA, serverB] = started as [AppProcess, AppProcess, AppProcess, AppProcess];
  }, 2 * START_MS);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(processes.map((process) => process.stop()));
    await deployment?.dispose();
  });

  async function client(server: AppProcess): Promise<Client> {
    const connected = await connectV1(server.url as string);
    clients.push(connected);
    return connected;
  }

  it('creates through one server, collects through the other, and pushes status from a worker', async () => {
    const alice = await client(serverA);
    const statuses: string[] = [];
    alice.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      statuses.push(`${n.params.taskId}:${n.params.status}`);
    });
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 1, label: 'shared' }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const other = await client(serverB);
    expect((await other.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
    const result = await other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Computed shared in 1s' }]);
    // The worker process completed it; the session on server A hears about it.
    await pollUntil(
      async () => statuses,
      (seen) => seen.includes(`${taskId}:completed`),
    );
  });

  it('cancels through the other server a task a worker is running', async () => {
    const created = await (await client(serverA)).request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60, label: 'cancel' }, task: {} } },
      CreateTaskResultSchema,
    );
    const other = await client(serverB);
    await pollUntil(
      () => other.experimental.tasks.getTask(created.task.taskId),
      (task) => task.statusMessage === 'computing cancel',
    );
    expect((await other.experimental.tasks.cancelTask(created.task.taskId)).status).toBe('cancelled');
    expect((await (await client(serverA)).experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
  });

  it('streams notifications/tasks on one server for a task a worker runs, created through the other', async () => {
    const created = await rpc2026(serverA.url as string, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 1, label: 'listened' },
    });
    const taskId = created.result?.taskId as string;
    const { stream } = await listenForTasks(serverB.url as string, [taskId]);
    if (!stream) throw new Error('no listen stream');
    expect((await stream.next()).method).toBe('notifications/subscriptions/acknowledged');
    const done = await stream.next((message) => (message.params as { status?: string }).status === 'completed');
    expect(done.params).toMatchObject({
      taskId,
      result: { content: [{ type: 'text', text: 'Computed listened in 1s' }] },
    });
    stream.close();
  });

  it('makes one task of the same idempotent create sent to both servers at once, on both revisions', async () => {
    const key = `e2e-${randomUUID()}`;
    const args = { seconds: 1, label: 'idempotent' };
    const call = (client: Client) =>
      client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: args, task: {}, _meta: { 'mcp-task-server/idempotencyKey': key } },
        },
        CreateTaskResultSchema,
      );
    const [onA, onB] = await Promise.all([client(serverA), client(serverB)]);
    const created = await Promise.all([call(onA), call(onB), call(onA), call(onB)]);
    const taskIds = new Set(created.map((reply) => reply.task.taskId));
    expect(taskIds.size).toBe(1);
    const [taskId] = [...taskIds] as [string];
    // The same key over 2026-07-28, as `_meta` and as the HTTP header, names the same task.
    const viaMeta = await rpc2026(serverB.url as string, 'tools/call', {
      name: 'slow_compute',
      arguments: args,
      _meta: { 'mcp-task-server/idempotencyKey': key },
    });
    expect(viaMeta.result?.taskId).toBe(taskId);
    // Other arguments under the same key are refused, and change nothing.
    const conflict = await rpc2026(
      serverA.url as string,
      'tools/call',
      { name: 'slow_compute', arguments: { ...args, label: 'other' } },
      { headers: { 'idempotency-key': key } },
    );
    expect(conflict.error).toMatchObject({ code: -32030, message: expect.stringMatching(/idempotency key/) });
    const result = await onB.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Computed idempotent in 1s' }]);
  });

  it('honours the Idempotency-Key header on 2025-11-25 and 2026-07-28 calls across servers', async () => {
    const key = `header-${randomUUID()}`;
    const args = { seconds: 0, label: 'header' };
    const headers = { 'idempotency-key': key };
    const [first, second] = await Promise.all([
      rpc2026(serverA.url as string, 'tools/call', { name: 'slow_compute', arguments: args }, { headers }),
      rpc2026(serverB.url as string, 'tools/call', { name: 'slow_compute', arguments: args }, { headers }),
    ]);
    const taskId = first.result?.taskId as string;
    expect(typeof taskId).toBe('string');
    expect(second.result?.taskId).toBe(taskId);
    const legacy = await connectV1(serverB.url as string, { headers });
    clients.push(legacy);
    const again = await legacy.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: args, task: {} } },
      CreateTaskResultSchema,
    );
    expect(again.task.taskId).toBe(taskId);
    // A key with a space is refused before anything is created, naming what was wrong.
    const refused = await rpc2026(
      serverA.url as string,
      'tools/call',
      { name: 'slow_compute', arguments: args },
      { headers: { 'idempotency-key': 'not valid' } },
    );
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringMatching(/idempotency key/) });
  });

  it('serves 2026-07-28 clients across servers the same way', async () => {
    const created = await rpc2026(serverB.url as string, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: 'modern' },
    });
    const taskId = created.result?.taskId as string;
    const done = await pollUntil(
      () => rpc2026(serverA.url as string, 'tasks/get', { taskId }),
      (reply) => reply.result?.status === 'completed',
    );
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'Computed modern in 0s' }] });
  });

  it('parks a question in a worker and resumes it with an answer given through the other server', async () => {
    const created = await rpc2026(serverA.url as string, 'tools/call', {
      name: 'ask_in_turn',
      arguments: {},
    });
    const taskId = created.result?.taskId as string;
    const ask = async (server: AppProcess, key: string, name: string) => {
      await pollUntil(
        () => rpc2026(server.url as string, 'tasks/get', { taskId }),
        (reply) => Object.keys(reply.result?.inputRequests ?? {}).includes(key),
      );
      await sleep(PARKED_AFTER_MS);
      await rpc2026(server.url as string, 'tasks/update', {
        taskId,
        inputResponses: { [key]: { action: 'accept', content: { name } } },
      });
    };
    await ask(serverB, 'first_name', 'Ada');
    await ask(serverA, 'last_name', 'Lovelace');
    const done = await pollUntil(
      () => rpc2026(serverB.url as string, 'tasks/get', { taskId }),
      (reply) => reply.result?.status === 'completed',
    );
    expect(done.result?.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada Lovelace!' }] });
  });

  it("pushes a worker's questions on the creating session's GET stream to a client that only polls", async () => {
    const poller = await connectV1(serverA.url as string, { capabilities: { elicitation: {} } });
    clients.push(poller);
    const asked: string[] = [];
    poller.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      // Answered once the worker has parked the run: the answer resumes it from Redis.
      await sleep(PARKED_AFTER_MS);
      return { action: 'accept', content: { name: asked.length === 1 ? 'Grace' : 'Hopper' } };
    });
    const created = await poller.request(
      { method: 'tools/call', params: { name: 'ask_in_turn', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await pollUntil(
      () => poller.experimental.tasks.getTask(taskId),
      (task) => task.status === 'completed',
      30_000,
    );
    expect(asked).toEqual(['First name?', 'Last name of Grace?']);
    const result = await poller.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Grace Hopper!' }]);
  });

  it('replays a parked decorated method through the real tool registry: ctx.step runs once', async () => {
    const label = randomUUID();
    const created = await rpc2026(serverA.url as string, 'tools/call', { name: 'counted_step', arguments: { label } });
    const taskId = created.result?.taskId as string;
    await pollUntil(
      () => rpc2026(serverB.url as string, 'tasks/get', { taskId }),
      (reply) => reply.result?.status === 'input_required',
    );
    await sleep(PARKED_AFTER_MS);
    await rpc2026(serverB.url as string, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { go: true } } },
    });
    const done = await pollUntil(
      () => rpc2026(serverA.url as string, 'tasks/get', { taskId }),
      (reply) => reply.result?.status === 'completed',
    );
    // The method ran again from the top after the park (possibly in the other worker): the step
    // gave the first run's value back instead of counting again.
    expect(done.result?.result).toMatchObject({ structuredContent: { stepValue: 1 } });
    const counted = done.result?.result as { structuredContent?: { stepRunsInProcess?: number } } | undefined;
    expect(counted?.structuredContent?.stepRunsInProcess).toBeLessThanOrEqual(1);
  });

  it(
    'keeps every task pollable and its result retrievable after a server restart',
    async () => {
      const created = await (await client(serverA)).request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 0, label: 'restart' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      await serverA.stop();
      serverA = await startAppProcess('conformance-fixture', 'server', { ...env, WORKERS: '0' }, START_MS);
      processes.push(serverA);
      const fresh = await client(serverA);
      const result = await fresh.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'Computed restart in 0s' }]);
    },
    START_MS + 20_000,
  );
}
