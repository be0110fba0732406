/**
 * `@Task({ concurrency })` as an app declares it, through the generator and the tool registry,
 * on both runtimes: a tool limited to one run at a time never runs twice at once in a process,
 * even when the process may run many tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

function describeConcurrency(name: string, redis: boolean): void {
  (redis ? describeWithRedis : describe)(`@Task({ concurrency: 1 }): ${name}`, () => {
    const prefix = randomPrefix();
    let running: RunningServer;
    beforeAll(async () => {
      running = await startServer({
        ...app,
        workers: 8,
        ...(redis && { redis: { connection: REDIS_URL, prefix } }),
      });
    });
    afterAll(async () => {
      await running?.close();
      if (redis) await deleteKeysUnder(prefix);
    });

    it('runs the tool one task at a time, though the process may run eight', async () => {
      const created = await Promise.all(
        Array.from({ length: 4 }, () =>
          rpc2026(running.url, 'tools/call', { name: 'one_at_a_time', arguments: { ms: 150 } }),
        ),
      );
      const ids = created.map((reply) => reply.result?.taskId as string);
      const done = await Promise.all(
        ids.map((taskId) =>
          pollUntil(
            () => rpc2026(running.url, 'tasks/get', { taskId }),
            (reply) => reply.result?.status === 'completed',
            20_000,
          ),
        ),
      );
      for (const reply of done) {
        expect(reply.result?.result).toMatchObject({ structuredContent: { mostAtOnce: 1 } });
      }
    });
  });
}

describeConcurrency('in process', false);
describeConcurrency('BullMQ', true);
