/**
 * The fault suite: the conformance fixture on real Redis with its workers in real processes,
 * everything reaching Redis through a TCP proxy this test controls (all on loopback). While 500
 * tasks run, workers are SIGKILLed at random and replaced, and Redis is cut off for 5 s in the
 * middle. Afterwards:
 *
 * - every task ended, and exactly once: one terminal notification each on the listen stream,
 *   one terminal status each by 2025 push, and `tasks/get` agrees;
 * - every `ctx.step` result was replayed, not recomputed, where the method ran again;
 * - every blocking `tasks/result` got its answer and every stream its last word;
 * - no waiter or follower is left behind in the server.
 *
 * Bounded in time: short lock and stall timings (the same in every worker) so lost workers are
 * found in about 3 s, and the whole suite takes about a minute.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { app } from '../../examples/conformance-fixture/app.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { sleep } from '../contract/runtime-contract.js';
import { type AppProcess, startAppProcess } from '../e2e/processes.js';
import {
  connectV1,
  listenForTasks,
  pollUntil,
  type RunningServer,
  rpc2026,
  type SseStream,
  startServer,
} from '../e2e/support.js';
import { redisAddress, startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const TASKS = 500;
const STEP_TASKS = 30;
const BLOCKING_RESULTS = 20;
const WORKER_PROCESSES = 3;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const AnyResult = z.looseObject({});

describeWithRedis('fault suite: worker SIGKILLs and a 5 s Redis cut under 500 tasks', () => {
  const prefix = randomPrefix();
  let proxy: TcpProxy;
  let running: RunningServer;
  const workers = new Set<AppProcess>();
  let client: Client | undefined;

  const workerEnv = () => ({
    REDIS_URL: proxy.url,
    REDIS_PREFIX: prefix,
    WORKERS: '8',
    WORKER_LOCK_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
    // Kills and the cut each cost a job a recovery; none of them may fail a task here.
    WORKER_MAX_STALLED: '20',
    WORKER_SHUTDOWN_GRACE_MS: '1000',
    MCP_TASK_LOG_LEVEL: 'error',
  });

  async function startWorker(): Promise<void> {
    workers.add(await startAppProcess('conformance-fixture', 'worker', workerEnv(), 60_000));
  }

  beforeAll(async () => {
    proxy = await startTcpProxy(redisAddress(REDIS_URL));
    // The server runs no tasks and lives in this process, so its waiter counts can be read.
    running = await startServer({
      ...app,
      redis: { connection: proxy.url, prefix },
      workers: 0,
      // 500 creates in seconds from one caller: the per-caller rate limits are not under test here.
      limits: { createsPerSecond: 10_000, createBurst: 10_000, readsPerSecond: 10_000, readBurst: 10_000 },
    });
    await Promise.all(Array.from({ length: WORKER_PROCESSES }, () => startWorker()));
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => {});
    await Promise.allSettled([...workers].map((worker) => worker.stop('SIGKILL')));
    await running?.close();
    await proxy?.close();
    await deleteKeysUnder(prefix);
  });

  it('ends every task exactly once, replays steps, answers every wait, and leaves no waiter behind', async () => {
    // 2025 side: a session whose tasks are pushed to it, and blocking tasks/result calls.
    client = await connectV1(running.url);
    const pushedTerminal = new Map<string, number>();
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      if (TERMINAL.has(n.params.status)) {
        pushedTerminal.set(n.params.taskId, (pushedTerminal.get(n.params.taskId) ?? 0) + 1);
      }
    });
    const blockingIds: string[] = [];
    for (let index = 0; index < BLOCKING_RESULTS; index++) {
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 2 + (index % 4), label: `b${index}` }, task: {} },
        },
        CreateTaskResultSchema,
      );
      blockingIds.push(created.task.taskId);
    }
    const blocking = blockingIds.map((taskId) =>
      (client as Client).request({ method: 'tasks/result', params: { taskId } }, AnyResult, { timeout: 120_000 }),
    );

    // 2026 side: plain tasks and tasks whose step must run once before a question.
    const labels = new Map<string, string>();
    const ids: string[] = [];
    for (let start = 0; start < TASKS; start += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, TASKS - start) }, (_, offset) => {
          const index = start + offset;
          if (index < STEP_TASKS) {
            const label = randomUUID();
            return rpc2026(running.url, 'tools/call', { name: 'counted_step', arguments: { label } }).then((reply) => {
              labels.set(reply.result?.taskId as string, label);
              return reply;
            });
          }
          const seconds = (index % 7) * 0.25;
          return rpc2026(running.url, 'tools/call', {
            name: 'slow_compute',
            arguments: { seconds, label: `t${index}` },
          });
        }),
      );
      for (const reply of batch) {
        expect(reply.error).toBeUndefined();
        ids.push(reply.result?.taskId as string);
      }
    }
    const listened = await listenForTasks(running.url, ids);
    const stream = listened.stream as SseStream;
    const ack = await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect((ack.params as { notifications: { taskIds: string[] } }).notifications.taskIds).toHaveLength(TASKS);

    // Faults: a worker SIGKILLed (and replaced) every 1.5 s, and a 5 s cut in the middle.
    let faulting = true;
    const killer = (async () => {
      while (faulting) {
        await sleep(1500);
        if (!faulting) break;
        const victims = [...workers];
        const victim = victims[Math.floor(Math.random() * victims.length)];
        if (!victim) continue;
        workers.delete(victim);
        await victim.stop('SIGKILL');
        await startWorker();
      }
    })();
    await sleep(4000);
    proxy.cut();
    await sleep(5000);
    proxy.restore();

    // Answer each counted_step task's question once the stream shows it (from here on,
    // requests go through the restored proxy).
    const answered = new Set<string>();
    const terminal = new Map<string, Record<string, unknown>>();
    const terminalCount = new Map<string, number>();
    const deadline = Date.now() + 90_000;
    while (terminal.size < TASKS && Date.now() < deadline) {
      let message: Record<string, unknown>;
      try {
        message = await stream.next((m) => m.method === 'notifications/tasks', 5000);
      } catch {
        continue;
      }
      const params = message.params as { taskId: string; status: string };
      if (params.status === 'input_required' && labels.has(params.taskId) && !answered.has(params.taskId)) {
        answered.add(params.taskId);
        void rpc2026(running.url, 'tasks/update', {
          taskId: params.taskId,
          inputResponses: { go: { action: 'accept', content: { go: true } } },
        });
      }
      if (TERMINAL.has(params.status)) {
        terminal.set(params.taskId, params);
        terminalCount.set(params.taskId, (terminalCount.get(params.taskId) ?? 0) + 1);
      }
      // Killing stops once most work is done, so the tail ends within the time bound.
      if (terminal.size > TASKS * 0.8) faulting = false;
    }
    faulting = false;
    await killer;

    // Every task ended, once, and completed (kills and the cut cost recoveries, not outcomes).
    expect(terminal.size).toBe(TASKS);
    expect([...terminalCount.values()].every((count) => count === 1)).toBe(true);
    const statuses = new Map<string, number>();
    for (const params of terminal.values()) {
      const status = params.status as string;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ completed: TASKS });
    // Late messages would be a second terminal notification. Once every task had its last word
    // the server ends the stream: what is left ends with the listen request's result.
    const rest = await stream.rest();
    expect(rest.filter((m) => TERMINAL.has((m.params as { status?: string } | undefined)?.status ?? ''))).toEqual([]);
    expect(rest.at(-1)).toMatchObject({ result: { resultType: 'complete' } });

    // Steps: the value is the first run's everywhere, and no process ran a step twice.
    for (const [taskId] of labels) {
      const result = (terminal.get(taskId) as { result?: { structuredContent?: Record<string, number> } }).result;
      expect(result?.structuredContent?.stepValue).toBe(1);
      expect(result?.structuredContent?.stepRunsInProcess).toBeLessThanOrEqual(1);
    }

    // Every blocking tasks/result answered with its result, and the 2025 push said each end once.
    const results = await Promise.all(blocking);
    expect(results.every((result) => Array.isArray(result.content))).toBe(true);
    await pollUntil(
      async () => pushedTerminal.size,
      (size) => size === BLOCKING_RESULTS,
      20_000,
    );
    expect([...pushedTerminal.values()].every((count) => count === 1)).toBe(true);

    // tasks/get agrees with what the streams said.
    for (const taskId of ids.slice(0, 50)) {
      const read = await rpc2026(running.url, 'tasks/get', { taskId });
      expect(read.result?.status).toBe('completed');
    }

    // Nothing left behind once the clients are gone.
    stream.close();
    await client.close();
    client = undefined;
    await pollUntil(
      async () => running.server.stats(),
      (stats) =>
        stats.waiters.total.result === 0 &&
        stats.waiters.total.stream === 0 &&
        stats.engine.waiters === 0 &&
        stats.engine.followedTasks === 0,
      20_000,
    );
  }, 240_000);
});
