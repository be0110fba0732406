/**
 * On BullMQ a task's record just disappears at its TTL; the `expired` lifecycle fact (a log
 * line and `mcp_task_expired_total`) comes from the processes that follow the task, and one of
 * them says it, however many processes and followers there are.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { sleep } from '../contract/runtime-contract.js';
import { connectV1, listenForTasks, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { captureLogger, OpsTools, opsManifest } from './ops-app.js';

/** The value of one sample line (`name{labels} value`), 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function expiredCount(running: RunningServer): Promise<number> {
  const response = await fetch(new URL('/metrics', running.url));
  return sample(await response.text(), 'mcp_task_expired_total{tool="crawl"}');
}

describeWithRedis('the expired fact on BullMQ', () => {
  const prefix = randomPrefix();
  const logs = [captureLogger(), captureLogger()];
  let servers: RunningServer[] = [];

  beforeAll(async () => {
    // Two server processes of one app (one Redis prefix); the first also runs the work.
    servers = await Promise.all(
      logs.map((captured, index) =>
        startServer({
          manifest: opsManifest,
          instances: [new OpsTools()],
          redis: { connection: REDIS_URL, prefix },
          workers: index === 0 ? 2 : 0,
          logger: captured.logger,
          metrics: true,
        }),
      ),
    );
  });

  afterAll(async () => {
    await Promise.all(servers.map((running) => running.close()));
    await deleteKeysUnder(prefix);
  });

  it('is said once for a task followed by several streams in two processes', async () => {
    const [first, second] = servers as [RunningServer, RunningServer];
    const client = await connectV1(first.url);
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'crawl', arguments: { pages: 100, pauseMs: 1000 }, task: { ttl: 2000 } },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    // Followers: the 2025 session's status push and two listen streams on the first server, one
    // listen stream on the second.
    const listens = await Promise.all([
      listenForTasks(first.url, [taskId]),
      listenForTasks(first.url, [taskId]),
      listenForTasks(second.url, [taskId]),
    ]);
    for (const { stream } of listens) {
      const rest = await stream?.rest(15_000);
      expect(rest?.at(-2)?.params).toMatchObject({ taskId, status: 'failed', statusMessage: 'Task has expired' });
    }
    await pollUntil(
      async () => (await expiredCount(first)) + (await expiredCount(second)),
      (count) => count > 0,
    );
    // Every follower has heard of the expiry by now; give the losing claims time to come back.
    await sleep(500);
    expect((await expiredCount(first)) + (await expiredCount(second))).toBe(1);
    const lines = logs.flatMap((captured) => captured.of(taskId)).filter((line) => line.data.event === 'expired');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      message: 'task expired',
      data: { taskId, tool: 'crawl', jobId: taskId, role: 'server' },
    });
    await client.close();
  }, 30_000);
});
