/**
 * A sleep across the loss of every process: the issue-import example, its server and its worker
 * in real processes on Redis, pauses between two pages with `ctx.sleep`. While the task sleeps,
 * the worker is SIGKILLed and the server stopped; a new server and a new worker come up, and the
 * task wakes on time and completes, the page fetched before the sleep not fetched again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect, it } from 'vitest';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { type AppProcess, startAppProcess } from './processes.js';
import { connectV1, pollUntil } from './support.js';

describeWithRedis('a sleep across a SIGKILLed worker and a restarted server', () => {
  const prefix = randomPrefix();
  const processes: AppProcess[] = [];
  const clients: Client[] = [];
  const requests: string[] = [];
  const tracker = http.createServer((request, response) => {
    const page = Number(new URL(request.url ?? '/', 'http://stub').searchParams.get('page'));
    requests.push(`page ${page}`);
    const body = { page, totalPages: 2, issues: [{ id: page, title: `Issue ${page}`, state: 'open' }] };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    for (const started of processes) await started.stop('SIGKILL');
    await new Promise<void>((resolve) => tracker.close(() => resolve()));
    await deleteKeysUnder(prefix);
  });

  async function start(entry: 'server' | 'worker', env: Record<string, string>): Promise<AppProcess> {
    const started = await startAppProcess('issue-import', entry, env, 60_000);
    processes.push(started);
    return started;
  }

  it('wakes on time on the new worker and completes once, the first page fetched once', async () => {
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    const env = {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      ISSUES_API_URL: `http://127.0.0.1:${(tracker.address() as AddressInfo).port}/api`,
      WORKER_LOCK_MS: '1000',
      WORKER_STALLED_INTERVAL_MS: '500',
    };
    const server = await start('server', { ...env, WORKERS: '0' });
    const worker = await start('worker', env);
    const client = await connectV1(`${server.url}`);
    clients.push(client);
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'import_issues',
          arguments: { project: 'acme/two', pauseBetweenPagesMs: 12_000 },
          task: { ttl: 120_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const asleep = await pollUntil(
      () => client.experimental.tasks.getTask(taskId),
      (task) => task.statusMessage?.startsWith('sleeping until') ?? false,
      20_000,
    );
    const until = Date.parse((asleep.statusMessage as string).replace('sleeping until ', ''));
    expect(requests).toEqual(['page 1']);

    // Every process goes: nothing of the sleep lived in any of them.
    worker.child.kill('SIGKILL');
    await worker.stop();
    await client.close();
    await server.stop('SIGKILL');
    expect(Date.now()).toBeLessThan(until);

    const newServer = await start('server', { ...env, WORKERS: '0' });
    await start('worker', env);
    const newClient = await connectV1(`${newServer.url}`);
    clients.push(newClient);
    // Still asleep unless starting the two processes took longer than the sleep: only the new
    // worker can finish it either way.
    const restarted = await newClient.experimental.tasks.getTask(taskId);
    if (Date.now() < until) expect(restarted.status).toBe('working');
    const result = await newClient.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ pages: 2, totalPages: 2, issues: 2 });
    const done = await newClient.experimental.tasks.getTask(taskId);
    expect(done.status).toBe('completed');
    expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThanOrEqual(until);
    expect(requests).toEqual(['page 1', 'page 2']);
  }, 120_000);
});
