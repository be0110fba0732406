/**
 * What a task costs in Redis on the usual path, and the guards that make the cheap path safe:
 * a create stores its record and adds its job in one script; a worker starts a fresh job from
 * the snapshot the job carries (no read) and writes the outcome in the script that completes
 * the job; a refused create adds no job; a write or a cancel that lands between the method's
 * end and the job's completion is neither lost nor overwritten; a cancel that races the job
 * reaches it either way.
 *
 * Commands are observed by wrapping ioredis's `sendCommand` in this process and keeping only
 * those naming this test's keys (and MULTI/EXEC).
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { answerChange } from '../../src/engine/inputs.js';
import type { ExecutionControl, TaskExecutor } from '../../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { BullmqTaskRuntime, type TaskWorkerSettings } from '../../src/runtime/bullmq/index.js';
import { runtimeNames } from '../../src/runtime/bullmq/keys.js';
import { SHARE_SCRIPTS } from '../../src/runtime/bullmq/principal-shares.js';
import { RecordFold } from '../../src/runtime/bullmq/record-fold.js';
import { RECORD_SCRIPTS, RedisTaskStore } from '../../src/runtime/bullmq/record-store.js';
import { SHARE_FIELD } from '../../src/runtime/bullmq/share-field.js';
import { waitUntil } from '../contract/runtime-contract.js';
import {
  deleteKeysUnder,
  describeWithRedis,
  newRecord,
  quietLogger,
  REDIS_URL,
  randomPrefix,
  waitForRecord,
  withRedis,
} from './support.js';

const FOLD_SCRIPTS = { ...RECORD_SCRIPTS, ...SHARE_SCRIPTS };

const DONE: TaskOutcome = { kind: 'result', result: { content: [] }, isError: false };

interface Sent {
  /** The ioredis connection name: the runtime's (`…:runtime`) or the worker's (`…:worker`). */
  readonly connection: string;
  readonly name: string;
  /** The first key the command names (for EVALSHA/EVAL: after the sha and the key count). */
  readonly key: string;
  /** Every argument, as strings. */
  readonly args: readonly string[];
}

/** Records every command whose arguments mention `prefix`, and the order of sends and replies. */
function observeCommands(prefix: string) {
  const sent: Sent[] = [];
  const order: string[] = [];
  const original = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, command, stream) {
    const args = (command as unknown as { args: unknown[] }).args.map(String);
    // MULTI and EXEC name no key; this file's clients are the only ones in its process.
    if (args.some((arg) => arg.includes(prefix)) || command.name === 'multi' || command.name === 'exec') {
      const name = command.name.toLowerCase();
      const key = name === 'evalsha' || name === 'eval' ? (args[2] ?? '') : (args[0] ?? '');
      const entry = { connection: String(this.options.connectionName), name, key, args };
      sent.push(entry);
      order.push(`send ${describe(entry)}`);
      command.promise.then(
        () => order.push(`reply ${describe(entry)}`),
        () => order.push(`reply ${describe(entry)}`),
      );
    }
    return original.call(this, command, stream);
  } as typeof original;
  return {
    sent,
    order,
    reset() {
      sent.length = 0;
      order.length = 0;
    },
    restore() {
      Redis.prototype.sendCommand = original;
    },
  };
}

async function eventually(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function describe(entry: Sent): string {
  const record = entry.args.some((arg) => arg.includes(':task:'));
  // BullMQ's job scripts name the wait list first; the record's keys follow its own (record-fold.ts).
  if (entry.key.endsWith(':wait')) return `${entry.name} job${record ? '+record' : ''}`;
  if (record) return `${entry.name} record`;
  return entry.key === '' ? entry.name : `${entry.name} ${entry.key}`;
}

/** The commands naming `taskId`'s record key. */
function namingRecord(sent: readonly Sent[], taskId: string): Sent[] {
  return sent.filter((entry) => entry.args.some((arg) => arg.endsWith(`:task:${taskId}`)));
}

describeWithRedis('bullmq round trips per task', () => {
  let prefix: string;
  let runtime: BullmqTaskRuntime | undefined;
  let observed: ReturnType<typeof observeCommands> | undefined;

  beforeEach(() => {
    prefix = randomPrefix();
  });

  afterEach(async () => {
    observed?.restore();
    observed = undefined;
    await runtime?.close();
    runtime = undefined;
    await deleteKeysUnder(prefix);
  });

  async function start(worker?: TaskWorkerSettings): Promise<BullmqTaskRuntime> {
    runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix,
      logger: quietLogger,
      ...(worker && { worker: { shutdownGraceMs: 200, logger: quietLogger, ...worker } }),
    });
    await runtime.worker?.started;
    return runtime;
  }

  function jobsWaiting(): Promise<number> {
    const queue = new Queue(runtimeNames(prefix).shards[0]?.queue as string, {
      connection: { url: REDIS_URL },
      prefix,
    });
    return queue.getWaitingCount().finally(() => queue.close());
  }

  function activeJobs(): Promise<number> {
    const queue = new Queue(runtimeNames(prefix).shards[0]?.queue as string, {
      connection: { url: REDIS_URL },
      prefix,
    });
    return queue.getActiveCount().finally(() => queue.close());
  }

  it('creates with the record and the job in one script: one command per create', async () => {
    const rt = await start();
    await rt.create(newRecord({})); // the first use of each script on a connection sends its source
    observed = observeCommands(prefix);
    for (let index = 0; index < 5; index++) {
      observed.reset();
      const task = await rt.create(newRecord({ index }));
      expect(observed.order).toEqual(['send evalsha job+record', 'reply evalsha job+record']);
      expect(namingRecord(observed.sent, task.taskId)).toHaveLength(1);
    }
  });

  it('creates under an id a client chose in the same one script: atomic, with no MULTI', async () => {
    const rt = await start();
    await rt.create(newRecord({}, { clientTaskId: 'warm-up' }));
    observed = observeCommands(prefix);
    await rt.create(newRecord({}, { clientTaskId: 'chosen' }));
    const sends = observed.order.filter((step) => step.startsWith('send '));
    expect(sends).toEqual(['send evalsha job+record']);
  });

  it('puts the record as created in the job data, from the one copy the script carries', async () => {
    const rt = await start();
    const task = await rt.create(newRecord({ payload: 'x'.repeat(200) }, { priority: 3 }));
    const queue = new Queue(runtimeNames(prefix).shards[0]?.queue as string, {
      connection: { url: REDIS_URL },
      prefix,
    });
    try {
      const job = await queue.getJob(task.taskId);
      expect(job?.data.start).toEqual(task);
      expect(job?.data.tool).toBe(task.tool);
      // A prioritized job goes through BullMQ's other insert script, folded the same way.
      expect(await job?.getState()).toBe('prioritized');
    } finally {
      await queue.close();
    }
  });

  it('starts a fresh job without reading its record, and writes the outcome once, without a conflict', async () => {
    const ran: string[] = [];
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        ran.push(record.taskId);
        return DONE;
      },
    };
    const rt = await start({ executor, concurrency: 4 });
    const warm = await rt.create(newRecord({}));
    await waitForRecord(rt, warm.taskId, (record) => record.status === 'completed');
    observed = observeCommands(prefix);
    const tasks = await Promise.all([1, 2, 3, 4, 5, 6].map((index) => rt.create(newRecord({ index }))));
    for (const task of tasks) await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    // Per task, the worker's only command on its record is the outcome's compare-and-set inside
    // BullMQ's completion of the job, which wins at once (a lost race would re-read and send it
    // again); it never reads it.
    for (const task of tasks) {
      const byWorker = namingRecord(observed.sent, task.taskId).filter((entry) => entry.connection.endsWith(':worker'));
      expect(byWorker.map(describe)).toEqual(['evalsha job+record']);
      expect(byWorker[0]?.args).toContain('completed');
    }
    expect(ran).toEqual(expect.arrayContaining(tasks.map((task) => task.taskId)));
  });

  it('frees a fair-share slot in the script that completes the job, and still wakes the owner’s next waiter', async () => {
    const executor: TaskExecutor = {
      async execute() {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return DONE;
      },
    };
    const rt = await start({ executor, concurrency: 4 });
    const running = runtimeNames(prefix).shares.running('alice');
    observed = observeCommands(prefix);
    // One slot in the owner's share: the second and third wait, and only a release wakes them
    // before the share's own re-check (30 s), so finishing at all shows the folded release woke them.
    const tasks = await Promise.all(
      [1, 2, 3].map((index) => rt.create(newRecord({ index }), { maxRunningForOwner: 1 })),
    );
    for (const task of tasks) await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    for (const task of tasks) {
      const byWorker = observed.sent.filter(
        (entry) => entry.connection.endsWith(':worker') && entry.args.includes(task.taskId),
      );
      const namingShare = byWorker.filter((entry) => entry.args.includes(running));
      // The completion carries the release (the share's keys beside the record's): no release of its own.
      const completion = namingShare.filter((entry) => entry.args.some((arg) => arg.endsWith(`:task:${task.taskId}`)));
      expect(completion).toHaveLength(1);
      // A release of its own is the share's script with its 3 keys and [taskId, now]: never sent.
      const releases = namingShare.filter(
        (entry) => entry.key === running && entry.args.length === 7 && entry.args[5] === task.taskId,
      );
      expect(releases).toEqual([]);
    }
  });

  /** The share's own take (`mcpShareAcquire`: its 3 keys, the running set first, and 6 arguments), by the worker. */
  function separateTakes(sent: readonly Sent[], running: string): Sent[] {
    return sent.filter(
      (entry) => entry.connection.endsWith(':worker') && entry.key === running && entry.args.length === 11,
    );
  }

  it('takes a fair-share slot in the script that activates the job: no take of its own', async () => {
    const running = runtimeNames(prefix).shares.running('alice');
    const held: (string | null)[] = [];
    let inspect: Redis | undefined;
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        // The slot is in the owner's running set while the method runs.
        held.push((await inspect?.zscore(running, record.taskId)) ?? null);
        return DONE;
      },
    };
    await withRedis(async (client) => {
      inspect = client;
      const rt = await start({ executor, concurrency: 4 });
      const warm = await rt.create(newRecord({}), { maxRunningForOwner: 64 });
      await waitForRecord(rt, warm.taskId, (record) => record.status === 'completed');
      observed = observeCommands(prefix);
      held.length = 0;
      const tasks = await Promise.all(
        [1, 2, 3, 4, 5, 6].map((index) => rt.create(newRecord({ index }), { maxRunningForOwner: 64 })),
      );
      for (const task of tasks) await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
      expect(held).toHaveLength(tasks.length);
      expect(held.every((score) => score !== null)).toBe(true);
      expect(separateTakes(observed.sent, running)).toEqual([]);
      // Nothing else names the share's keys first either: no release of its own, no renewal.
      expect(observed.sent.filter((entry) => entry.connection.endsWith(':worker') && entry.key === running)).toEqual(
        [],
      );
      expect(await client.zcard(running)).toBe(0);
    });
  });

  it('keeps a share taken at activation: Alice at her share runs no more, Bob still runs', async () => {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        started.push(record.taskId);
        if (record.tool === 'hold') await new Promise<void>((resolve) => gates.set(record.taskId, resolve));
        return DONE;
      },
    };
    const warnings: string[] = [];
    const logger = {
      ...quietLogger,
      warn: (message: string, data?: object) => warnings.push(`${message} ${JSON.stringify(data)}`),
    };
    const rt = await start({ executor, concurrency: 4, logger });
    const names = runtimeNames(prefix);
    observed = observeCommands(prefix);
    const first = await rt.create(newRecord({}, { tool: 'hold' }), { maxRunningForOwner: 1 });
    await waitUntil(() => started.includes(first.taskId));
    const second = await rt.create(newRecord({ which: 'second' }), { maxRunningForOwner: 1 });
    const bobs = await rt.create(newRecord({}, { owner: 'bob' }), { maxRunningForOwner: 1 });
    // Bob's share is his own: his task runs to its end while Alice's first holds her one slot.
    await waitForRecord(rt, bobs.taskId, (record) => record.status === 'completed');
    // Alice's second was taken by a worker with room (4 slots) and put in her line by the
    // script that activated it: it waits, and its method never started.
    await waitForRecord(rt, second.taskId, (record) => record.statusMessage === 'queued (1 running for this caller)');
    expect(started).not.toContain(second.taskId);
    expect(await withRedis((client) => client.zrange(names.shares.running('alice'), '0', '-1'))).toEqual([
      first.taskId,
    ]);
    gates.get(first.taskId)?.();
    // The first's completion frees the slot and wakes the second, which takes it as it activates.
    await waitForRecord(rt, second.taskId, (record) => record.status === 'completed');
    expect(separateTakes(observed.sent, names.shares.running('alice'))).toEqual([]);
    expect(separateTakes(observed.sent, names.shares.running('bob'))).toEqual([]);
    // The waiting job left the worker delayed: BullMQ neither completed nor failed it after.
    expect(warnings).toEqual([]);
  });

  it('gives a job fetched by its owner’s completion the slot that completion freed', async () => {
    const executor: TaskExecutor = {
      async execute() {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return DONE;
      },
    };
    // One job at a time: each next job comes with the completion of the one before it.
    const rt = await start({ executor, concurrency: 1 });
    const messages = new Map<string, (string | undefined)[]>();
    const stop = rt.subscribe(({ record }) => {
      messages.set(record.taskId, [...(messages.get(record.taskId) ?? []), record.statusMessage]);
    });
    try {
      const warm = await rt.create(newRecord({}));
      await waitForRecord(rt, warm.taskId, (record) => record.status === 'completed');
      const tasks = [];
      for (const index of [1, 2, 3]) tasks.push(await rt.create(newRecord({ index }), { maxRunningForOwner: 1 }));
      for (const task of tasks) await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
      // The completion frees the slot before it takes one for the next job: none of them waited.
      for (const task of tasks) {
        expect(messages.get(task.taskId)?.filter((message) => message?.startsWith('queued ('))).toEqual([]);
      }
    } finally {
      stop();
    }
  });

  it('removes the share from the job of a task cancelled while it runs: no activation takes a slot for it', async () => {
    let release: () => void = () => {};
    const started: string[] = [];
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        started.push(record.taskId);
        // Ignores the cancel's abort, so the job stays active with its data replaced.
        await new Promise<void>((resolve) => (release = resolve));
        return DONE;
      },
    };
    const rt = await start({ executor });
    const names = runtimeNames(prefix);
    const task = await rt.create(newRecord({}), { maxRunningForOwner: 2 });
    await waitUntil(() => started.includes(task.taskId));
    const jobKey = names.shardOf(task.taskId).job(task.taskId);
    expect(await withRedis((client) => client.hget(jobKey, SHARE_FIELD))).toBe('2:0:o:alice');
    await rt.cancel(task.taskId, 'while it runs');
    expect(await withRedis((client) => client.hexists(jobKey, SHARE_FIELD))).toBe(0);
    expect(JSON.parse((await withRedis((client) => client.hget(jobKey, 'data'))) as string)).toEqual({ tool: 't' });
    release();
    await eventually(async () => (await activeJobs()) === 0);
  });

  it('folds the record into every job insert BullMQ picks: a delayed job and a job with a parent too', async () => {
    await withRedis(async (client) => {
      const fold = new RecordFold(client, FOLD_SCRIPTS);
      const queue = new Queue('folded', { connection: client, prefix }, fold.backendFactory);
      try {
        const store = new RedisTaskStore(client, runtimeNames(prefix));
        const parent = await queue.add('parent', { tool: 't' }, { jobId: `parent-${Date.now()}` });
        const add = (opts: object) => {
          const record = { ...newRecord({}), statusMessage: 'queued' };
          return fold
            .addWithRecord(record.taskId, store.insertCommand(record, undefined), () =>
              queue.add('t', { tool: 't' }, { jobId: record.taskId, ...opts }),
            )
            .then(() => record.taskId);
        };
        // A delayed job goes through BullMQ's addDelayedJob (a durable sleep parks one the same
        // way), a child through addStandardJob with its parent's keys: each stores its record.
        const delayed = await add({ delay: 60_000 });
        const child = await add({ parent: { id: parent.id as string, queue: `${prefix}:folded` } });
        for (const [taskId, state] of [
          [delayed, 'delayed'],
          [child, 'waiting'],
        ] as const) {
          expect((await store.get(taskId))?.taskId).toBe(taskId);
          expect(await (await queue.getJob(taskId))?.getState()).toBe(state);
          expect((await queue.getJob(taskId))?.data).toMatchObject({ start: { taskId } });
        }
      } finally {
        await queue.obliterate({ force: true }).catch(() => {});
        await queue.close();
      }
    });
  });

  it('writes an outcome whose record changed after the method ended: re-read, then completed with the job', async () => {
    let other: RedisTaskStore | undefined;
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        // Another writer lands between what the run knows and its outcome (a progress note
        // from elsewhere): the folded compare-and-set loses, and the job must not complete
        // without the outcome.
        await other?.update(record.taskId, { status: 'working', statusMessage: 'noted elsewhere' });
        return DONE;
      },
    };
    await withRedis(async (client) => {
      other = new RedisTaskStore(client, runtimeNames(prefix));
      const rt = await start({ executor });
      const warm = await rt.create(newRecord({}));
      await waitForRecord(rt, warm.taskId, (record) => record.status === 'completed');
      observed = observeCommands(prefix);
      const task = await rt.create(newRecord({}));
      const done = await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
      expect(done.outcome).toEqual(DONE);
      const byWorker = namingRecord(observed.sent, task.taskId).filter((entry) => entry.connection.endsWith(':worker'));
      // The lost attempt, the read, the attempt that wins (and completes the job).
      expect(byWorker.map(describe)).toEqual(['evalsha job+record', 'hmget record', 'evalsha job+record']);
      await eventually(async () => (await jobsWaiting()) === 0);
      expect(await activeJobs()).toBe(0);
    });
  });

  it('completes the job of a task cancelled after its method ended, and keeps it cancelled', async () => {
    let rt: BullmqTaskRuntime | undefined;
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        await rt?.cancel(record.taskId, 'cancelled as it ended');
        return DONE;
      },
    };
    rt = await start({ executor });
    const task = await rt.create(newRecord({}));
    await waitForRecord(rt, task.taskId, (record) => record.status === 'cancelled');
    // The late outcome is dropped by the state machine, and the job still leaves the active set.
    await eventually(async () => (await activeJobs()) === 0);
    const marker = await rt.create(newRecord({}));
    await waitForRecord(rt, marker.taskId, (record) => record.status === 'cancelled');
    expect((await rt.get(task.taskId))?.status).toBe('cancelled');
    expect((await rt.get(task.taskId))?.statusMessage).toBe('cancelled as it ended');
  });

  it('adds no job for a create refused as a duplicate, even while the first task’s job is being removed', async () => {
    let runs = 0;
    const executor: TaskExecutor = {
      async execute() {
        runs++;
        return DONE;
      },
    };
    const rt = await start({ executor, concurrency: 4 });
    // Ids a client chose (SEP-1686) are the only ones that can be taken. Each duplicate is sent
    // as soon as its first task completes, while the worker is removing that task's job: sent
    // apart from the record's insert, a job insert landing after that removal would add a job.
    const firsts = await Promise.all(
      Array.from({ length: 20 }, (_, index) => newRecord({ which: 'first' }, { clientTaskId: `client-${index}` })),
    );
    await Promise.all(
      firsts.map(async (first) => {
        await rt.create(first);
        await waitForRecord(rt, first.taskId, (record) => record.status === 'completed');
        await expect(rt.create({ ...first, args: { which: 'second' } })).rejects.toMatchObject({
          code: 'DUPLICATE_TASK',
        });
      }),
    );
    // A task created after the refusals runs and completes: by then a wrongly added job would have run too.
    const later = await rt.create(newRecord({ which: 'later' }));
    await waitForRecord(rt, later.taskId, (record) => record.status === 'completed');
    await eventually(async () => (await jobsWaiting()) === 0);
    expect(runs).toBe(firsts.length + 1);
    expect((await rt.get(firsts[0]?.taskId as string))?.args).toEqual({ which: 'first' });
  });

  it('adds no job for a create over the quota, and the same id can be created once there is room', async () => {
    const rt = await start();
    const owner = 'quota-owner';
    const blocking = await rt.create(newRecord({}, { owner }), { maxLiveForOwner: 1 });
    const retried = newRecord({ which: 'retried' }, { owner });
    await expect(rt.create(retried, { maxLiveForOwner: 1 })).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(await jobsWaiting()).toBe(1);
    await rt.cancel(blocking.taskId, 'make room');
    // The refusal's placeholder does not swallow the job of the create that succeeds.
    await rt.create(retried, { maxLiveForOwner: 1 });
    expect(await jobsWaiting()).toBe(1);
    const executor: TaskExecutor = { execute: async () => DONE };
    await rt.close();
    const withWorker = await start({ executor });
    await waitForRecord(withWorker, retried.taskId, (record) => record.status === 'completed');
  });

  it('never starts a job from its snapshot once its task was cancelled: the cancel removes the snapshot', async () => {
    const rt = await start();
    const task = await rt.create(newRecord({}));
    const queueName = runtimeNames(prefix).shards[0]?.queue as string;
    const queue = new Queue(queueName, { connection: { url: REDIS_URL }, prefix });
    try {
      expect((await queue.getJob(task.taskId))?.data.start?.taskId).toBe(task.taskId);
      // The cancel's record write, without the job removal that follows it in `cancel`: the
      // state a worker meets when it takes the job between the two.
      await withRedis(async (client) => {
        const store = new RedisTaskStore(client, runtimeNames(prefix));
        await store.update(task.taskId, { status: 'cancelled', statusMessage: 'by test' });
      });
      expect((await queue.getJob(task.taskId))?.data.start).toBeUndefined();
    } finally {
      await queue.close();
    }
    let runs = 0;
    await rt.close();
    const withWorker = await start({
      executor: {
        async execute() {
          runs++;
          return DONE;
        },
      },
    });
    await eventually(async () => (await jobsWaiting()) === 0);
    const marker = await withWorker.create(newRecord({}));
    await waitForRecord(withWorker, marker.taskId, (record) => record.status === 'completed');
    expect(runs).toBe(1);
    expect((await withWorker.get(task.taskId))?.status).toBe('cancelled');
  });

  it('stops a job whose cancel was heard before the job reached this worker', async () => {
    let release: () => void = () => {};
    const started: string[] = [];
    const executor: TaskExecutor = {
      async execute(record: TaskRecord) {
        started.push(record.taskId);
        if (record.tool === 'hold') await new Promise<void>((resolve) => (release = resolve));
        return DONE;
      },
    };
    const rt = await start({ executor, concurrency: 1 });
    const holder = await rt.create(newRecord({}, { tool: 'hold' }));
    await waitUntil(() => started.includes(holder.taskId));
    // Queued behind the holder, with its snapshot: the worker will take it without a read.
    const raced = await rt.create(newRecord({}));
    // A cancel that ran after the worker took the job, as the worker sees it: the record says
    // cancelled, the job still carries its snapshot, and the message arrives first.
    await withRedis(async (client) => {
      const names = runtimeNames(prefix);
      const key = names.record(raced.taskId);
      const stored = JSON.parse((await client.hget(key, 'record')) as string) as TaskRecord;
      const cancelled = { ...stored, status: 'cancelled', statusMessage: 'raced', lastUpdatedAt: Date.now() };
      await client.hset(key, 'record', JSON.stringify(cancelled), 'version', '2');
      await client.publish(names.cancelChannel, raced.taskId);
    });
    release();
    await waitForRecord(rt, holder.taskId, (record) => record.status === 'completed');
    await eventually(async () => (await jobsWaiting()) === 0);
    const marker = await rt.create(newRecord({}));
    await waitForRecord(rt, marker.taskId, (record) => record.status === 'completed');
    expect(started).not.toContain(raced.taskId);
    expect((await rt.get(raced.taskId))?.status).toBe('cancelled');
  });

  it('runs a parked job again from its record, with its answers, not from the snapshot it was created with', async () => {
    const runs: { record: TaskRecord; resumed: boolean }[] = [];
    const executor: TaskExecutor = {
      async execute(record: TaskRecord, control: ExecutionControl) {
        runs.push({ record, resumed: control.placement?.resumed ?? false });
        const answer = await control.ask('approve', {
          question: 'approve',
          params: { mode: 'form', message: 'Approve?', requestedSchema: { type: 'object', properties: {} } },
        });
        return { kind: 'result', result: { content: [{ type: 'text', text: answer.action }] }, isError: false };
      },
    };
    const rt = await start({ executor, inputGraceMs: 20 });
    const task = await rt.create(newRecord({}));
    await waitForRecord(rt, task.taskId, (record) => record.status === 'input_required');
    // Parked once the grace period is over: the job sits in the delayed set.
    const queue = new Queue(runtimeNames(prefix).shards[0]?.queue as string, {
      connection: { url: REDIS_URL },
      prefix,
    });
    try {
      await eventually(async () => (await queue.getDelayedCount()) === 1);
      expect((await queue.getJob(task.taskId))?.data.start).toBeUndefined();
    } finally {
      await queue.close();
    }
    await rt.answer(
      task.taskId,
      (current) => answerChange(current, { approve: { action: 'accept', content: {} } }, () => undefined).change,
    );
    const done = await waitForRecord(rt, task.taskId, (record) => record.status === 'completed');
    expect(done.outcome).toMatchObject({ result: { content: [{ text: 'accept' }] } });
    expect(runs).toHaveLength(2);
    expect(runs[1]?.resumed).toBe(true);
    expect(runs[1]?.record.inputAnswers?.approve).toEqual({ action: 'accept', content: {} });
  });

  it('subscribes to task events only while something in the process listens', async () => {
    const rt = await start();
    const channel = runtimeNames(prefix).eventsChannel;
    const subscribers = () =>
      withRedis(async (client) => Number(((await client.pubsub('NUMSUB', channel)) as [string, number])[1]));
    const task = await rt.create(newRecord({}));
    expect(await subscribers()).toBe(0);
    const heard: string[] = [];
    const stop = rt.subscribe(({ record }) => heard.push(record.status));
    await rt.get(task.taskId); // reads wait until the subscription is confirmed
    expect(await subscribers()).toBe(1);
    await rt.cancel(task.taskId, 'heard');
    await vi.waitFor(() => expect(heard).toContain('cancelled'));
    stop();
    await vi.waitFor(async () => expect(await subscribers()).toBe(0), { timeout: 8000 });
  });
});
