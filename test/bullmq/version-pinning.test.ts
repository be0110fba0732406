/**
 * Version pinning with real worker processes: a task parked on a question on a worker of one
 * version of its tool, answered once the only worker runs another, waits (holding no slot) for
 * a worker with its version, runs there when one starts, and fails naming both versions when
 * none comes within `versionWaitMs`. Fresh tasks meanwhile run on any worker.
 */

import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { answerChange } from '../../src/engine/inputs.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { useRedisScope } from '../support/redis-scope.js';
import { ChildWorker } from './child-worker.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, waitForRecord } from './support.js';

const TOOL = 'count_primes';
/** Any answer will do: the fixture's question takes whatever it gets. */
const anyAnswer = () => undefined;
const WAITING = 'waiting for a worker with count_primes version 3';

describeWithRedis('bullmq version pinning across processes', () => {
  const scope = useRedisScope();

  function startChild(version: string, settings: Record<string, number> = {}): ChildWorker {
    // A short grace, so a question parks its job (frees the slot) within the test.
    const child = new ChildWorker(scope.prefix, { TOOL_VERSION: version, INPUT_GRACE_MS: 200, ...settings });
    scope.onClose(() => child.stop());
    return child;
  }

  function startRuntime(): BullmqTaskRuntime {
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    return runtime;
  }

  /** A task started on a version-3 worker, parked on its question, that worker then stopped. */
  async function parkedOnVersion3(runtime: BullmqTaskRuntime): Promise<TaskRecord> {
    const old = startChild('3');
    await old.ready();
    const task = await runtime.create(newRecord({ script: 'ask-with-effect' }, { tool: TOOL }));
    const parked = await waitForRecord(runtime, task.taskId, (record) => record.status === 'input_required');
    // A fresh task took the version of the worker that ran it.
    expect(parked.toolVersion).toBe('3');
    old.kill('SIGTERM');
    expect(await old.exited).toBe(0);
    return parked;
  }

  function answer(runtime: BullmqTaskRuntime, taskId: string): Promise<TaskRecord | undefined> {
    return runtime.answer(
      taskId,
      (current) => answerChange(current, { approve: { action: 'accept' } }, anyAnswer).change,
    );
  }

  it('a resumed task waits for a worker with its version and runs there; fresh tasks run anywhere', async () => {
    const runtime = startRuntime();
    const task = await parkedOnVersion3(runtime);
    const current = startChild('4', { VERSION_WAIT_MS: 60_000 });
    await current.ready();

    await answer(runtime, task.taskId);
    const waiting = await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === WAITING);
    expect(waiting).toMatchObject({ status: 'working', toolVersion: '3' });
    await current.waitFor((report) => report.event === 'waiting' && report.taskId === task.taskId);
    expect(current.reports.filter((r) => r.event === 'waiting' && r.taskId === task.taskId)).toEqual([
      { event: 'waiting', taskId: task.taskId, reason: 'version' },
    ]);
    // The worker notes the wait in the record (and tells) just before it joins the wait set.
    await expect.poll(async () => (await runtime.stats()).waiting?.version).toBe(1);

    // The wait holds no slot: another principal's fresh task runs on the version-4 worker, takes
    // its version, and the waiting task's message says nothing of it (nor it of the waiting task).
    const other = await runtime.create(newRecord({ script: 'finish' }, { tool: TOOL, owner: 'bob' }));
    const otherDone = await waitForRecord(runtime, other.taskId, (record) => record.status === 'completed');
    expect(otherDone.toolVersion).toBe('4');
    expect(otherDone.statusMessage).toBeUndefined();
    expect((await runtime.get(task.taskId))?.statusMessage).toBe(WAITING);

    // A worker with version 3 starts, and the task resumes there (and only there) within moments.
    const old = startChild('3');
    await old.ready();
    const done = await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed', 10_000);
    expect(done.outcome).toEqual({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'accept' }] },
      isError: false,
    });
    expect(done.toolVersion).toBe('3');
    expect(old.reports.filter((r) => r.event === 'started' && r.taskId === task.taskId)).toHaveLength(1);
    expect(current.reports.filter((r) => r.event === 'started' && r.taskId === task.taskId)).toEqual([]);
    // The step before the question ran once, on the first run.
    const counters = new Redis(REDIS_URL);
    scope.onClose(async () => counters.disconnect());
    expect(await counters.get(`${scope.prefix}:effects:${task.taskId}`)).toBe('1');
    expect(await counters.get(`${scope.prefix}:completions:${task.taskId}`)).toBe('1');
  });

  it("a retry due after its tool's version changed waits for a worker with the old version, its step kept", async () => {
    const runtime = startRuntime();
    const old = startChild('3', { RETRY_DELAY_MS: 1500 });
    await old.ready();
    const task = await runtime.create(newRecord({ script: 'fail-once' }, { tool: TOOL }));
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage?.startsWith('attempt 2 of 3') ?? false);
    old.kill('SIGTERM');
    expect(await old.exited).toBe(0);
    const current = startChild('4', { VERSION_WAIT_MS: 60_000 });
    await current.ready();

    // The back-off ends on the version-4 worker, which leaves the attempt for a version-3 one.
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === WAITING);
    const again = startChild('3');
    await again.ready();
    const done = await waitForRecord(runtime, task.taskId, (record) => record.status === 'completed', 10_000);
    expect(done.outcome).toMatchObject({ result: { content: [{ type: 'text', text: 'attempt 2, effect 1' }] } });
    expect(again.reports.filter((r) => r.event === 'started' && r.taskId === task.taskId)).toEqual([
      { event: 'started', taskId: task.taskId, attempt: 2, version: '3' },
    ]);
    expect(current.reports.filter((r) => r.event === 'started' && r.taskId === task.taskId)).toEqual([]);
  });

  it('fails the task naming both versions when no worker with its version comes within versionWaitMs', async () => {
    const runtime = startRuntime();
    const task = await parkedOnVersion3(runtime);
    const current = startChild('4', { VERSION_WAIT_MS: 1500 });
    await current.ready();

    await answer(runtime, task.taskId);
    await waitForRecord(runtime, task.taskId, (record) => record.statusMessage === WAITING);
    const failed = await waitForRecord(runtime, task.taskId, (record) => record.status === 'failed', 10_000);
    const message = 'count_primes changed since this task started (version 3 → 4); start it again';
    expect(failed.statusMessage).toBe(message);
    expect(failed.outcome).toEqual({ kind: 'error', error: { code: -32603, message } });
    expect(current.reports.filter((r) => r.event === 'started' && r.taskId === task.taskId)).toEqual([]);
    // Waiting ended with the task: the gauge no longer counts it.
    expect((await runtime.stats()).waiting?.version).toBe(0);
  });
});
