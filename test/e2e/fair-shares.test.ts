/**
 * `limits.maxRunningTasksPerPrincipal` as an app configures it, on both runtimes, through real
 * HTTP with two authenticated principals: a flood from one does not stop the other's task from
 * starting; the waiting tasks say why in `statusMessage`, in a lifecycle log line (counts, no
 * arguments) and in the `mcp_task_waiting_by_reason` gauge; and they start once a run ends.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { captureLogger, OpsTools, opsManifest, tokenAuth } from '../observe/ops-app.js';
import { connectV1, pollUntil, type RunningServer, startServer } from './support.js';

async function startCrawl(client: Client, pauseMs: number): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'crawl', arguments: { pages: 1, pauseMs }, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function waitingGauge(url: string): Promise<number | undefined> {
  const text = await (await fetch(`${new URL(url).origin}/metrics`)).text();
  const series = 'mcp_task_waiting_by_reason{reason="principal_share"} ';
  const line = text.split('\n').find((candidate) => candidate.startsWith(series));
  return line === undefined ? undefined : Number(line.slice(series.length));
}

function describeFairShares(name: string, redis: boolean): void {
  (redis ? describeWithRedis : describe)(`fair shares between principals: ${name}`, () => {
    const prefix = randomPrefix();
    const captured = captureLogger();
    let running: RunningServer;
    let ann: Client;
    let bo: Client;

    beforeAll(async () => {
      running = await startServer({
        manifest: opsManifest,
        instances: [new OpsTools()],
        logger: captured.logger,
        metrics: true,
        workers: 4,
        limits: { maxRunningTasksPerPrincipal: 1 },
        http: { auth: tokenAuth({ 'token-ann': 'ann', 'token-bo': 'bo' }) },
        ...(redis && { redis: { connection: REDIS_URL, prefix } }),
      });
      ann = await connectV1(running.url, { token: 'token-ann' });
      bo = await connectV1(running.url, { token: 'token-bo' });
    });
    afterAll(async () => {
      await Promise.all([ann?.close(), bo?.close()]);
      await running?.close();
      if (redis) await deleteKeysUnder(prefix);
    });

    it("a flood from one principal does not stop another's task from starting", async () => {
      const first = await startCrawl(ann, 10_000);
      await pollUntil(
        () => ann.experimental.tasks.getTask(first),
        (task) => task.statusMessage !== 'queued',
      );
      const queued = [await startCrawl(ann, 20), await startCrawl(ann, 20)];
      for (const taskId of queued) {
        await pollUntil(
          () => ann.experimental.tasks.getTask(taskId),
          (task) => task.statusMessage === 'queued (1 running for this caller)',
        );
      }
      // Bob's task starts and ends while Ann's wait.
      const bobs = await startCrawl(bo, 10);
      const result = await bo.experimental.tasks.getTaskResult(bobs, CallToolResultSchema);
      expect(result.isError).toBeFalsy();
      for (const taskId of queued) expect((await ann.experimental.tasks.getTask(taskId)).status).toBe('working');
      expect(await waitingGauge(running.url)).toBe(2);

      const told = captured.of(queued[0] as string).find((line) => line.data.event === 'waiting');
      expect(told?.data).toMatchObject({ reason: 'principal_share', running: 1, limit: 1, principal: 'sub:ann' });
      expect(JSON.stringify(told)).not.toContain('pauseMs');

      // Ann's run ends (here by a cancel): her waiting tasks start, one at a time, and finish.
      await ann.experimental.tasks.cancelTask(first);
      for (const taskId of queued) {
        const done = await ann.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(done.isError).toBeFalsy();
      }
      await pollUntil(
        () => waitingGauge(running.url),
        (count) => count === 0,
      );
    });
  });
}

describeFairShares('in process', false);
describeFairShares('BullMQ', true);
