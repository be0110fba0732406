/**
 * Child tasks on BullMQ with real Redis and real worker processes (`createTaskWorker`): children
 * spread over several processes, a failing child caught by its parent, the parent parked in
 * waiting-children holding no slot, cascade cancel, a parent's worker SIGKILLed while its
 * children run, the children bound, several shards, and two principals.
 */
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { expect, it } from 'vitest';
import { type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { ChildWorker } from '../bullmq/child-worker.js';
import { describeWithRedis, quietLogger, REDIS_URL } from '../bullmq/support.js';
import { useRedisScope } from '../support/redis-scope.js';

const SCRIPT = fileURLToPath(new URL('./children-worker.ts', import.meta.url));
const alice: Caller = { principal: 'alice' };
const bob: Caller = { principal: 'bob' };
/** Short lock and stall timings, the same in every process. */
const FAST_STALLS = { LOCK_MS: 1000, STALLED_MS: 500 };

function structured(record: TaskRecord): Record<string, unknown> {
  if (record.outcome?.kind !== 'result') throw new Error(`no result: ${JSON.stringify(record)}`);
  return record.outcome.result.structuredContent as Record<string, unknown>;
}

describeWithRedis('child tasks on BullMQ across processes', () => {
  const scope = useRedisScope();

  function startWorker(settings: Record<string, number> = {}): ChildWorker {
    const worker = new ChildWorker(scope.prefix, settings, SCRIPT);
    scope.onClose(() => worker.stop());
    return worker;
  }

  function startServer(shards?: number): TaskEngine {
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      logger: quietLogger,
      ...(shards !== undefined && { shards }),
    });
    scope.onClose(() => runtime.close());
    return new TaskEngine({ runtime });
  }

  it('spreads children over worker processes, parks the parent in waiting-children, and lets it catch a failure', async () => {
    const workers = [startWorker({ CONCURRENCY: 2 }), startWorker({ CONCURRENCY: 2 })];
    const engine = startServer();
    await Promise.all(workers.map((worker) => worker.ready()));

    const parent = await engine.create(alice, {
      tool: 'fan',
      args: { parts: 6, holdMs: 300, failAt: 4, catchFailure: true },
    });
    // Parked: working, the count in its message, its job waiting for its children's.
    const parked = await engine.waitFor(alice, parent.taskId, (record) =>
      /^\d of 6 subtasks done$/.test(record.statusMessage ?? ''),
    );
    expect(parked.status).toBe('working');
    const queue = new Queue('{tasks}', { connection: { url: REDIS_URL }, prefix: scope.prefix });
    scope.onClose(() => queue.close());
    await expect
      .poll(async () => (await queue.getJob(parent.taskId))?.getState(), { timeout: 10_000 })
      .toBe('waiting-children');

    const done = await engine.waitForTerminal(alice, parent.taskId);
    const report = structured(done) as { failure: string };
    const failed = done.children?.['part#5'];
    expect(report.failure).toBe(`Child task part (${failed?.taskId}) failed: part 4 broke`);
    const pids = new Set(
      workers.flatMap((worker) =>
        worker.reports.filter((r) => r.event === 'started' && r.tool === 'part').map((r) => r.pid),
      ),
    );
    // Two slots per process and six children that hold: both processes ran some.
    expect(pids.size).toBe(2);
    for (const entry of Object.values(done.children ?? {})) {
      const child = await engine.get(alice, entry.taskId);
      expect(child.parent?.taskId).toBe(parent.taskId);
      expect(child.owner).toBe('alice');
    }
    const parkedLines = workers.flatMap((worker) => worker.reports.filter((r) => r.event === 'parked'));
    const wokeLines = workers.flatMap((worker) => worker.reports.filter((r) => r.event === 'woke'));
    expect(parkedLines.map((r) => r.taskId)).toContain(parent.taskId);
    expect(wokeLines.map((r) => r.taskId)).toContain(parent.taskId);
  }, 60_000);

  it('cancels the unfinished children with their parent', async () => {
    const worker = startWorker();
    const engine = startServer();
    await worker.ready();
    const parent = await engine.create(alice, { tool: 'fan', args: { parts: 3, holdMs: 60_000 } });
    await engine.waitFor(alice, parent.taskId, (record) => record.statusMessage === '0 of 3 subtasks done');
    await engine.cancel(alice, parent.taskId);
    const after = await engine.get(alice, parent.taskId);
    for (const entry of Object.values(after.children ?? {})) {
      const child = await engine.waitForTerminal(alice, entry.taskId);
      expect(child).toMatchObject({ status: 'cancelled', statusMessage: 'cancelled with its parent task' });
    }
    expect(Object.keys(after.children ?? {})).toHaveLength(3);
  }, 30_000);

  it('resumes a parent whose worker was SIGKILLed while its children ran, and starts none twice', async () => {
    const first = startWorker({ ...FAST_STALLS, CONCURRENCY: 4 });
    const engine = startServer();
    await first.ready();
    const parent = await engine.create(alice, {
      tool: 'fan',
      args: { parts: 3, holdMs: 1500, holdParentMs: 5000 },
    });
    // All three children made and recorded, the parent still running (holding its slot).
    await engine.waitFor(alice, parent.taskId, (record) => Object.keys(record.children ?? {}).length === 3);
    await first.waitFor((r) => r.event === 'started' && r.tool === 'part');
    first.kill('SIGKILL');
    await first.exited;
    const second = startWorker({ ...FAST_STALLS, CONCURRENCY: 4 });
    await second.ready();

    const done = await engine.waitForTerminal(alice, parent.taskId, AbortSignal.timeout(40_000));
    expect(done.status).toBe('completed');
    expect(structured(done)).toMatchObject({ sum: 0 + 2 + 4 });
    expect(second.reports.some((r) => r.event === 'started' && r.taskId === parent.taskId)).toBe(true);
    // Exactly the three children, in the record and in the principal's listing.
    const listed = (await engine.list(alice)).tasks.filter((task) => task.tool === 'part');
    expect(listed).toHaveLength(3);
    expect(new Set(listed.map((task) => task.taskId))).toEqual(
      new Set(Object.values(done.children ?? {}).map((entry) => entry.taskId)),
    );
  }, 90_000);

  it('refuses the spawn past the configured maxChildrenPerTask', async () => {
    const worker = startWorker({ MAX_CHILDREN: 2 });
    const engine = startServer();
    await worker.ready();
    const parent = await engine.create(alice, { tool: 'fan', args: { parts: 3 } });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.statusMessage).toBe(
      `Task ${parent.taskId} has started 2 child tasks, the most one task may start (maxChildrenPerTask is 2); wait for children in batches or raise the bound`,
    );
  }, 30_000);

  it("keeps children on their parent's shard, so a flow works with several shards", async () => {
    const worker = startWorker({ SHARDS: 4 });
    const engine = startServer(4);
    await worker.ready();
    const parent = await engine.create(alice, { tool: 'fan', args: { parts: 5, oneByOne: true } });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(structured(done)).toMatchObject({ sum: 20 });
  }, 30_000);

  it('shows children only to their principal, in the listing and in tasks/get', async () => {
    const worker = startWorker();
    const engine = startServer();
    await worker.ready();
    const parent = await engine.create(alice, { tool: 'fan', args: { parts: 2 } });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    const childIds = Object.values(done.children ?? {}).map((entry) => entry.taskId);
    expect(childIds).toHaveLength(2);
    const aliceIds = (await engine.list(alice)).tasks.map((task) => task.taskId);
    expect(aliceIds).toEqual(expect.arrayContaining([parent.taskId, ...childIds]));
    expect((await engine.list(bob)).tasks).toEqual([]);
    for (const id of childIds) await expect(engine.get(bob, id)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
  }, 30_000);
});
