/**
 * Benchmark 10: Redis memory per sleeping task. Framework: N tasks through the engine, the
 * BullMQ runtime and a `TaskWorker` whose method calls `control.sleep` for 10 minutes, until
 * every one is parked (its record says `sleeping until …`, its job is delayed, the parked-tasks
 * set counts it). Raw: N plain delayed BullMQ jobs with the same data (tool + arguments) and a
 * 10-minute `delay`, BullMQ's default options otherwise: the smallest job a raw app could park
 * with. Both measured as in `memory.ts`: `MEMORY USAGE … SAMPLES 0` summed over every key of the
 * run (BullMQ's events stream apart) divided by N, and the `used_memory` delta.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/sleep-memory.ts
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { TaskEngine } from '../src/engine/engine.js';
import type { ExecutionControl, TaskExecutor } from '../src/engine/runtime.js';
import type { TaskOutcome } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, TaskWorker } from '../src/runtime/bullmq/index.js';
import { compareFootprints, type Footprint, footprint, usedMemory } from './redis-footprint.js';
import {
  ARGS,
  BENCH_POLICY,
  inPool,
  RAW_JOB_DATA,
  REDIS_URL,
  RESULT,
  randomId,
  rawJobOptions,
  redisClient,
  runMain,
  sleep,
  TOOL,
} from './support.js';

const N = 2000;
const ROUNDS = 3;
const SLEEP_MS = 600_000;

/** Sleeps ten minutes, then would succeed: every run here parks. */
const sleepingExecutor: TaskExecutor = {
  async execute(_record, control: ExecutionControl): Promise<TaskOutcome> {
    await control.sleep?.('sleep', SLEEP_MS);
    return { kind: 'result', result: RESULT, isError: false };
  },
};

async function framework(client: Redis, prefix: string): Promise<Footprint> {
  const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue: 'framework', logger: silentLogger });
  const worker = new TaskWorker({
    executor: sleepingExecutor,
    concurrency: 50,
    // The sleep always parks.
    inputGraceMs: 10,
    connection: REDIS_URL,
    prefix,
    queue: 'framework',
    logger: silentLogger,
  });
  await worker.started;
  const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
  const before = await usedMemory(client);
  await inPool(N, 50, () =>
    engine.create({ principal: null }, { tool: TOOL, args: ARGS, toolTtlMs: 2 * SLEEP_MS, toolPollIntervalMs: 200 }),
  );
  // Parked: every job delayed and counted (the count is written last, after the move).
  for (;;) {
    const stats = await runtime.stats();
    if (stats.parked?.sleep === N && stats.queue?.delayed === N && stats.queue.active === 0) break;
    await sleep(50);
  }
  await worker.close();
  await runtime.close();
  return footprint(client, prefix, N, before);
}

/**
 * `minimal`: BullMQ's defaults (auto id) and the delay, the smallest delayed job. `same-options`:
 * the job options the runtime uses (a 128-bit id, attempts, back-off, removeOnFail) and the delay.
 */
async function raw(client: Redis, prefix: string, options: 'minimal' | 'same-options'): Promise<Footprint> {
  const connection = redisClient();
  const queue = new Queue('raw', { connection, prefix });
  await queue.waitUntilReady();
  const before = await usedMemory(client);
  await inPool(N, 50, () =>
    queue.add(
      TOOL,
      RAW_JOB_DATA,
      options === 'minimal' ? { delay: SLEEP_MS } : { ...rawJobOptions(randomId()), delay: SLEEP_MS },
    ),
  );
  await queue.close();
  connection.disconnect();
  return footprint(client, prefix, N, before);
}

runMain(() =>
  compareFootprints({
    n: N,
    rounds: ROUNDS,
    prefixTag: 'sleep-mem',
    framework,
    raw,
    bench: '10 sleep memory',
    unit: 'sleeping task',
    metric: `bytes per parked (sleeping) task vs a plain delayed raw job, MEMORY USAGE (N=${N})`,
    sameOptionsMetric: `same, delayed raw job with the runtime's job options, MEMORY USAGE`,
    target: '<= 3',
  }),
);
