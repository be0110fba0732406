/**
 * Benchmark 4: Redis memory per retained completed task. Framework: N no-op tasks through the
 * engine, the BullMQ runtime and a `TaskWorker`, until every record is `completed` (the record
 * hash keeps the arguments and the result; the job removes itself on completion). Raw: N BullMQ
 * jobs with the same data (tool + arguments), the same processor result and
 * `removeOnComplete: false`, so each completed job keeps its data and return value; once with
 * BullMQ's default options (the headline baseline: the smallest raw job) and once with the
 * runtime's job options.
 *
 * Measured and compared as `redis-footprint.ts` says: `MEMORY USAGE` over this run's keys
 * (BullMQ's events stream apart) per task, and the `used_memory` delta.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/memory.ts
 */
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, TaskWorker } from '../src/runtime/bullmq/index.js';
import { compareFootprints, type Footprint, footprint, usedMemory } from './redis-footprint.js';
import {
  ARGS,
  BENCH_POLICY,
  inPool,
  noopExecutor,
  RAW_JOB_DATA,
  REDIS_URL,
  RESULT,
  randomId,
  rawJobOptions,
  redisClient,
  runMain,
  TOOL,
  TOOL_OPTIONS,
} from './support.js';

const N = 5000;
const ROUNDS = 3;

async function framework(client: Redis, prefix: string): Promise<Footprint> {
  const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue: 'framework', logger: silentLogger });
  const worker = new TaskWorker({
    executor: noopExecutor,
    concurrency: 50,
    connection: REDIS_URL,
    prefix,
    queue: 'framework',
    logger: silentLogger,
  });
  await worker.started;
  const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
  let left = N;
  const done = new Promise<void>((resolve) => {
    runtime.subscribe(({ record }) => {
      if (isTerminal(record.status) && --left === 0) resolve();
    });
  });
  const before = await usedMemory(client);
  await inPool(N, 50, () => engine.create({ principal: null }, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS }));
  await done;
  await worker.close();
  await runtime.close();
  return footprint(client, prefix, N, before);
}

/**
 * `minimal`: BullMQ's default options (auto id, no retry settings), the smallest job a raw app
 * keeps. `same-options`: the job options the runtime uses (id, attempts, back-off, removeOnFail).
 */
async function raw(client: Redis, prefix: string, options: 'minimal' | 'same-options'): Promise<Footprint> {
  const connection = redisClient();
  const queue = new Queue('raw', { connection, prefix });
  const worker = new Worker('raw', async () => RESULT, { connection: redisClient(), prefix, concurrency: 50 });
  await worker.waitUntilReady();
  let left = N;
  const done = new Promise<void>((resolve) => {
    worker.on('completed', () => {
      if (--left === 0) resolve();
    });
  });
  const before = await usedMemory(client);
  await inPool(N, 50, () =>
    queue.add(
      TOOL,
      RAW_JOB_DATA,
      options === 'minimal' ? { removeOnComplete: false } : { ...rawJobOptions(randomId()), removeOnComplete: false },
    ),
  );
  await done;
  await worker.close();
  await queue.close();
  connection.disconnect();
  return footprint(client, prefix, N, before);
}

runMain(() =>
  compareFootprints({
    n: N,
    rounds: ROUNDS,
    prefixTag: 'mem',
    framework,
    raw,
    bench: '4 Redis memory',
    unit: 'task',
    metric: `bytes per retained completed task vs minimal raw job, MEMORY USAGE (N=${N})`,
    sameOptionsMetric: `same, raw job with the runtime's job options, MEMORY USAGE`,
    target: '<= 2',
  }),
);
