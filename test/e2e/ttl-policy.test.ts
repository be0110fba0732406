/**
 * The TTL policy as an app sets it through `createTaskServer({ policy })`, seen by real clients
 * on both runtimes: a TTL below the floor is raised to it (on Redis a 1 ms TTL used to fail the
 * create with -32603), one above the cap is cut to it, and both dialects report what was kept.
 */
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { connectV1, type RunningServer, rpc2026, startServer } from './support.js';

const policy = { minTtlMs: 2000, maxTtlMs: 120_000, defaultTtlMs: 60_000 };

function describePolicy(name: string, redis: boolean): void {
  (redis ? describeWithRedis : describe)(`TTL policy through createTaskServer: ${name}`, () => {
    const prefix = randomPrefix();
    let running: RunningServer;
    beforeAll(async () => {
      running = await startServer({
        ...app,
        policy,
        ...(redis && { redis: { connection: REDIS_URL, prefix }, workers: 2 }),
      });
    });
    afterAll(async () => {
      await running?.close();
      if (redis) await deleteKeysUnder(prefix);
    });

    it('raises a TTL below the floor, caps one above the maximum, and reports what it kept', async () => {
      const client = await connectV1(running.url);
      const create = (ttl: number) =>
        client.request(
          {
            method: 'tools/call',
            params: { name: 'slow_compute', arguments: { seconds: 0, label: 'ttl' }, task: { ttl } },
          },
          CreateTaskResultSchema,
        );
      // 1 ms is shorter than a create's round trip to Redis: it must still succeed, at the floor.
      expect((await create(1)).task.ttl).toBe(2000);
      expect((await create(10_000_000)).task.ttl).toBe(120_000);
      expect((await create(30_000)).task.ttl).toBe(30_000);
      await client.close();

      // The fixture's tool asks for 10 minutes; 2026 has no client TTL, so the cap applies.
      const modern = await rpc2026(running.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0, label: 'ttl' },
      });
      expect(modern.result?.ttlMs).toBe(120_000);
    });
  });
}

describePolicy('in process', false);
describePolicy('BullMQ', true);
