/**
 * A job whose task record is not there when a worker takes it (its write still in flight on
 * another node, or lost): the worker looks again with back-off, runs the task once the record
 * appears, and otherwise fails the job with a counted, logged reason instead of completing it
 * unseen. The race is injected by adding the job first and writing the record later.
 */
import { Queue } from 'bullmq';
import { afterEach, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { TaskMetrics } from '../../src/observe/metrics.js';
import { TaskWorker } from '../../src/runtime/bullmq/index.js';
import type { TaskJobData } from '../../src/runtime/bullmq/jobs.js';
import { runtimeNames } from '../../src/runtime/bullmq/keys.js';
import { RECORD_SCRIPTS, RedisTaskStore } from '../../src/runtime/bullmq/record-store.js';
import {
  deleteKeysUnder,
  describeWithRedis,
  newRecord,
  quietLogger,
  REDIS_URL,
  randomPrefix,
  withRedis,
} from './support.js';

const DONE = { kind: 'result' as const, result: { content: [{ type: 'text', text: 'ok' }] }, isError: false };

describeWithRedis('jobs without their record', () => {
  let prefix = '';
  let closers: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    closers = [];
    await deleteKeysUnder(prefix);
  });

  function setUp(orphanWaitMs: number) {
    prefix = randomPrefix();
    const names = runtimeNames(prefix);
    const ran: string[] = [];
    const events: LifecycleEvent[] = [];
    const metrics = new TaskMetrics();
    const executor: TaskExecutor = {
      execute: async (record: TaskRecord) => {
        ran.push(record.taskId);
        return DONE;
      },
      observe: (event) => {
        events.push(event);
        metrics.observe(event);
      },
    };
    const worker = new TaskWorker({
      connection: REDIS_URL,
      prefix,
      executor,
      concurrency: 2,
      orphanWaitMs,
      shutdownGraceMs: 100,
      logger: quietLogger,
    });
    const queue = new Queue<TaskJobData>(names.shards[0]?.queue as string, { connection: { url: REDIS_URL }, prefix });
    closers.push(
      () => worker.close(),
      () => queue.close(),
    );
    /** Writes the record as a create would (version 1), without its job. */
    const writeRecord = (record: TaskRecord) =>
      withRedis(async (client) => {
        // The insert script alone: a create folds it into its job's insert (record-fold.ts).
        const { keys, args } = new RedisTaskStore(client, names).insertCommand(record, undefined);
        await client.eval(RECORD_SCRIPTS.insert, keys.length, ...keys, ...args);
      });
    const readRecord = (taskId: string) => withRedis((client) => new RedisTaskStore(client, names).get(taskId));
    const orphans = async () => {
      const text = await metrics.registry.getSingleMetricAsString('mcp_task_orphan_jobs_total');
      return Number(/mcp_task_orphan_jobs_total\{tool="t"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    return { worker, queue, ran, events, writeRecord, readRecord, orphans };
  }

  async function eventually(check: () => Promise<boolean> | boolean, ms = 8000): Promise<void> {
    const until = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('the condition did not hold in time');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  const record = (): TaskRecord => ({ ...newRecord({}), statusMessage: 'queued' });

  it('runs a job whose record is written after the worker took it, reading it or from its snapshot', async () => {
    const { worker, queue, ran, events, writeRecord, readRecord, orphans } = setUp(3000);
    await worker.started;
    // Without a snapshot the worker reads first; with one it runs, and its outcome write is
    // where the missing record shows. Both wait for it.
    const reading = record();
    const snapshot = record();
    await queue.add('t', { tool: 't' }, { jobId: reading.taskId });
    await queue.add('t', { tool: 't', start: snapshot }, { jobId: snapshot.taskId });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ran).not.toContain(reading.taskId);
    await writeRecord(reading);
    await writeRecord(snapshot);
    await eventually(async () => (await readRecord(reading.taskId))?.status === 'completed');
    await eventually(async () => (await readRecord(snapshot.taskId))?.status === 'completed');
    expect((await readRecord(snapshot.taskId))?.outcome).toEqual(DONE);
    expect(ran.filter((id) => id === reading.taskId)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'orphaned')).toEqual([]);
    expect(await orphans()).toBe(0);
  });

  it('fails a job whose record never appears, counted and told, and runs nothing for it', async () => {
    const { worker, queue, ran, events, orphans } = setUp(400);
    await worker.started;
    const lost = record();
    await queue.add('t', { tool: 't' }, { jobId: lost.taskId });
    await eventually(async () => (await queue.getJob(lost.taskId))?.failedReason !== undefined);
    const job = await queue.getJob(lost.taskId);
    expect(await job?.getState()).toBe('failed');
    expect(job?.failedReason).toMatch(/^orphan job: no task record appeared within \d+ ms$/);
    expect(ran).not.toContain(lost.taskId);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'orphaned', task: expect.objectContaining({ taskId: lost.taskId }) }),
    );
    expect(await orphans()).toBe(1);
  });

  it('ends quietly the job of a task that expired: no wait, no orphan', async () => {
    const { worker, queue, events, orphans } = setUp(30_000);
    await worker.started;
    const expired = record();
    await queue.add('t', { tool: 't', expiresAt: Date.now() - 1000 }, { jobId: expired.taskId });
    const began = Date.now();
    await eventually(async () => (await (await queue.getJob(expired.taskId))?.getState()) === 'completed', 12_000);
    // Far within the orphan wait: it did not look for the record again.
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(events.filter((event) => event.type === 'orphaned')).toEqual([]);
    expect(await orphans()).toBe(0);
  });
});
