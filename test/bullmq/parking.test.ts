/**
 * Questions on the BullMQ runtime cost no worker while they wait (docs/design/decisions.md,
 * decision 5): a parked job frees its slot, survives the death of its worker, and runs again,
 * replaying answers and `step` results, once answered.
 */
import { expect, it } from 'vitest';
import { type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { ExecutionControl, TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { useRedisScope } from '../support/redis-scope.js';
import { ChildWorker } from './child-worker.js';
import { describeWithRedis, quietLogger, REDIS_URL, withRedis } from './support.js';

const ALICE: Caller = { principal: 'alice' };
/**
 * Short lock and stall timings (the same in every process, docs/design/bullmq.md §2): a job that was
 * still inside its input grace when the worker died is recovered in about a second.
 */
const CHILD_SETTINGS = { CONCURRENCY: 2, INPUT_GRACE_MS: 20, LOCK_MS: 1000, STALLED_MS: 500 };
const accept = { action: 'accept', content: {} };
const anyAnswer = () => undefined;

/** Asks one question after a memoised step; counts steps and method runs. */
class AskingExecutor implements TaskExecutor {
  runs = 0;
  steps = 0;
  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    this.runs++;
    await control.step('prepare', async () => ++this.steps);
    const answer = await control.ask('approve', {
      question: 'approve',
      params: {
        mode: 'form',
        message: `Approve ${record.taskId}?`,
        requestedSchema: { type: 'object', properties: {} },
      },
    });
    return { kind: 'result', result: { content: [{ type: 'text', text: answer.action }] }, isError: false };
  }
}

async function allInState(engine: TaskEngine, ids: readonly string[], accept: (r: TaskRecord) => boolean, ms = 60_000) {
  return Promise.all(ids.map((id) => engine.waitFor(ALICE, id, accept, AbortSignal.timeout(ms))));
}

describeWithRedis('questions on the BullMQ runtime', () => {
  const scope = useRedisScope();

  it('keeps 500 tasks waiting at once with one worker of concurrency 1, and completes them all when answered', async () => {
    const executor = new AskingExecutor();
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix: scope.prefix,
      logger: quietLogger,
      worker: { executor, concurrency: 1, inputGraceMs: 5, logger: quietLogger },
    });
    scope.onClose(() => runtime.close());
    await runtime.worker?.started;
    const engine = new TaskEngine({ runtime });

    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const created = await Promise.all(
        Array.from({ length: 50 }, () => engine.create(ALICE, { tool: 't', args: {} })),
      );
      ids.push(...created.map((task) => task.taskId));
    }
    // One slot, 500 questions outstanding at the same time: only parking makes that possible.
    const waiting = await allInState(engine, ids, (r) => r.status === 'input_required');
    expect(waiting.every((r) => Object.keys(r.inputRequests ?? {}).join() === 'approve')).toBe(true);

    for (let at = 0; at < ids.length; at += 50) {
      await Promise.all(ids.slice(at, at + 50).map((id) => engine.answer(ALICE, id, { approve: accept }, anyAnswer)));
    }
    const done = await allInState(engine, ids, (r) => r.status === 'completed');
    expect(done.every((r) => r.outcome?.kind === 'result' && JSON.stringify(r.outcome.result).includes('accept'))).toBe(
      true,
    );
    // Each method ran twice (asked, then resumed) and did its step once.
    expect(executor.steps).toBe(500);
    expect(executor.runs).toBe(1000);
  }, 120_000);

  it('loses nothing when the worker is killed while tasks wait: each completes once, each side effect once', async () => {
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    const engine = new TaskEngine({ runtime });
    const first = new ChildWorker(scope.prefix, CHILD_SETTINGS);
    scope.onClose(() => first.stop());
    await first.ready();

    const ids = (
      await Promise.all(
        Array.from({ length: 20 }, () => engine.create(ALICE, { tool: 't', args: { script: 'ask-with-effect' } })),
      )
    ).map((task) => task.taskId);
    await allInState(engine, ids, (r) => r.status === 'input_required', 30_000);
    first.kill('SIGKILL');
    await first.exited;

    // Answered while no worker runs at all; a new worker process picks the tasks up.
    await Promise.all(ids.map((id) => engine.answer(ALICE, id, { approve: accept }, anyAnswer)));
    const second = new ChildWorker(scope.prefix, CHILD_SETTINGS);
    scope.onClose(() => second.stop());
    await second.ready();
    const done = await allInState(engine, ids, (r) => r.status === 'completed', 30_000);
    expect(done).toHaveLength(20);

    const counts = await withRedis(async (client) => {
      const effects = await client.mget(...ids.map((id) => `${scope.prefix}:effects:${id}`));
      const completions = await client.mget(...ids.map((id) => `${scope.prefix}:completions:${id}`));
      return { effects, completions };
    });
    expect(counts.effects).toEqual(ids.map(() => '1'));
    expect(counts.completions).toEqual(ids.map(() => '1'));
  }, 90_000);
});
