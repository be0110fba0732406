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
import {
  ARGS,
  BENCH_POLICY,
  deleteKeysUnder,
  fmt,
  inPool,
  keysUnder,
  median,
  RAW_JOB_DATA,
  REDIS_URL,
  RESULT,
  type Row,
  randomId,
  rawJobOptions,
  redisClient,
  report,
  runMain,
  sleep,
  TOOL,
  uniquePrefix,
} from './support.js';

const N = 2000;
const ROUNDS = 3;
const SLEEP_MS = 600_000;

interface Footprint {
  readonly perTask: number;
  readonly stream: number;
  readonly usedMemory: number;
  readonly keys: string;
}

/** Sleeps ten minutes, then would succeed: every run here parks. */
const sleepingExecutor: TaskExecutor = {
  async execute(_record, control: ExecutionControl): Promise<TaskOutcome> {
    await control.sleep?.('sleep', SLEEP_MS);
    return { kind: 'result', result: RESULT, isError: false };
  },
};

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

async function footprint(client: Redis, prefix: string, before: number): Promise<Footprint> {
  const after = await usedMemory(client);
  const keys = await keysUnder(client, prefix);
  let total = 0;
  let stream = 0;
  const kinds = new Map<string, { count: number; bytes: number }>();
  for (const key of keys) {
    const bytes = Number(await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const kind = key.slice(prefix.length).replace(/:([A-Za-z0-9_-]{22}|\d+)$/, ':<id>');
    const seen = kinds.get(kind) ?? { count: 0, bytes: 0 };
    kinds.set(kind, { count: seen.count + 1, bytes: seen.bytes + bytes });
    if (kind.endsWith(':events')) stream += bytes;
    else total += bytes;
  }
  // Each kind of key with its count and average size: where the bytes go.
  const shown = [...kinds].map(([kind, { count, bytes }]) => `${count}× ${kind} (${fmt(bytes / count)} B)`).join(', ');
  return { perTask: total / N, stream, usedMemory: (after - before) / N, keys: shown };
}

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
  return footprint(client, prefix, before);
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
  return footprint(client, prefix, before);
}

async function main(): Promise<void> {
  const client = redisClient();
  const sides = ['framework', 'raw', 'rawSameOptions'] as const;
  type Side = (typeof sides)[number];
  const samples: Record<Side, Footprint[]> = { framework: [], raw: [], rawSameOptions: [] };
  const run = (side: Side, prefix: string) =>
    side === 'framework' ? framework(client, prefix) : raw(client, prefix, side === 'raw' ? 'minimal' : 'same-options');
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const prefix = uniquePrefix(`sleep-mem-${side}`);
        try {
          samples[side].push(await run(side, prefix));
        } finally {
          await deleteKeysUnder(prefix);
        }
      }
    }
  } finally {
    client.disconnect();
  }
  const m = (side: Side, key: 'perTask' | 'stream' | 'usedMemory') => median(samples[side].map((s) => s[key]));
  for (const side of sides) {
    console.log(
      `${side}: ${fmt(m(side, 'perTask'))} B/sleeping task by MEMORY USAGE (events stream apart: ${fmt(m(side, 'stream') / 1024)} KiB), ` +
        `${fmt(m(side, 'usedMemory'))} B/task by used_memory delta; keys: ${samples[side][0]?.keys}`,
    );
  }
  const ratio = (key: 'perTask' | 'usedMemory', base: Side = 'raw') =>
    median(samples.framework.map((s, i) => s[key] / (samples[base][i] as Footprint)[key]));
  const rows: Row[] = [
    {
      bench: '10 sleep memory',
      metric: `bytes per parked (sleeping) task vs a plain delayed raw job, MEMORY USAGE (N=${N})`,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('raw', 'perTask'))} B`,
      ratio: ratio('perTask'),
      target: '<= 3',
    },
    {
      bench: '10 sleep memory',
      metric: `same, used_memory delta (N=${N})`,
      framework: `${fmt(m('framework', 'usedMemory'))} B`,
      baseline: `${fmt(m('raw', 'usedMemory'))} B`,
      ratio: ratio('usedMemory'),
      target: '<= 3',
    },
    {
      bench: '10 sleep memory',
      metric: `same, delayed raw job with the runtime's job options, MEMORY USAGE`,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('rawSameOptions', 'perTask'))} B`,
      ratio: ratio('perTask', 'rawSameOptions'),
      target: '<= 3',
    },
  ];
  report(rows);
}

runMain(main);
