/**
 * Benchmark 4: Redis memory per retained completed task. Framework: N no-op tasks through the
 * engine, the BullMQ runtime and a `TaskWorker`, until every record is `completed` (the record
 * hash keeps the arguments and the result; the job removes itself on completion). Raw: N BullMQ
 * jobs with the same data (tool + arguments), the same processor result and
 * `removeOnComplete: false`, so each completed job keeps its data and return value; once with
 * BullMQ's default options (the headline baseline: the smallest raw job) and once with the
 * runtime's job options.
 *
 * Two measures, both over this run's keys only:
 * - `MEMORY USAGE` (exact, `SAMPLES 0`) summed over every key under the prefix, divided by N,
 *   with BullMQ's events stream (capped at ~10k entries, a fixed cost per queue) shown apart;
 * - the `INFO memory` `used_memory` delta over the N tasks (includes expiry entries and
 *   allocator rounding; noisier when anything else uses the same Redis).
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/memory.ts
 */
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
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
  noopExecutor,
  RAW_JOB_DATA,
  REDIS_URL,
  RESULT,
  type Row,
  randomId,
  rawJobOptions,
  redisClient,
  report,
  runMain,
  TOOL,
  TOOL_OPTIONS,
  uniquePrefix,
} from './support.js';

const N = 5000;
const ROUNDS = 3;

interface Footprint {
  /** Bytes per task over every key, events stream excluded. */
  readonly perTask: number;
  /** The events stream, total bytes (fixed per queue). */
  readonly stream: number;
  /** `used_memory` delta per task. */
  readonly usedMemory: number;
  /** Keys left per task, and what they are. */
  readonly keys: string;
}

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

async function footprint(client: Redis, prefix: string, before: number): Promise<Footprint> {
  const after = await usedMemory(client);
  const keys = await keysUnder(client, prefix);
  let total = 0;
  let stream = 0;
  const kinds = new Map<string, number>();
  for (const key of keys) {
    const bytes = Number(await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    // Name the key by its shape: a job or record id becomes `<id>`.
    const kind = key.slice(prefix.length).replace(/:([A-Za-z0-9_-]{22}|\d+)$/, ':<id>');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (kind.endsWith(':events')) stream += bytes;
    else total += bytes;
  }
  const shown = [...kinds].map(([kind, count]) => `${count}× ${kind}`).join(', ');
  return { perTask: total / N, stream, usedMemory: (after - before) / N, keys: shown };
}

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
  return footprint(client, prefix, before);
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
  return footprint(client, prefix, before);
}

async function main(): Promise<void> {
  const client = redisClient();
  const sides = ['framework', 'raw', 'rawSameOptions'] as const;
  type Side = (typeof sides)[number];
  const samples: Record<Side, Footprint[]> = { framework: [], raw: [], rawSameOptions: [] };
  const run = (side: Side, client: Redis, prefix: string) =>
    side === 'framework' ? framework(client, prefix) : raw(client, prefix, side === 'raw' ? 'minimal' : 'same-options');
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const prefix = uniquePrefix(`mem-${side}`);
        try {
          samples[side].push(await run(side, client, prefix));
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
      `${side}: ${fmt(m(side, 'perTask'))} B/task by MEMORY USAGE (events stream apart: ${fmt(m(side, 'stream') / 1024)} KiB), ` +
        `${fmt(m(side, 'usedMemory'))} B/task by used_memory delta; keys: ${samples[side][0]?.keys}`,
    );
  }
  const ratio = (key: 'perTask' | 'usedMemory', base: Side = 'raw') =>
    median(samples.framework.map((s, i) => s[key] / (samples[base][i] as Footprint)[key]));
  const rows: Row[] = [
    {
      bench: '4 Redis memory',
      metric: `bytes per retained completed task vs minimal raw job, MEMORY USAGE (N=${N})`,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('raw', 'perTask'))} B`,
      ratio: ratio('perTask'),
      target: '<= 2',
    },
    {
      bench: '4 Redis memory',
      metric: `same, used_memory delta (N=${N})`,
      framework: `${fmt(m('framework', 'usedMemory'))} B`,
      baseline: `${fmt(m('raw', 'usedMemory'))} B`,
      ratio: ratio('usedMemory'),
      target: '<= 2',
    },
    {
      bench: '4 Redis memory',
      metric: `same, raw job with the runtime's job options, MEMORY USAGE`,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('rawSameOptions', 'perTask'))} B`,
      ratio: ratio('perTask', 'rawSameOptions'),
      target: '<= 2',
    },
  ];
  report(rows);
}

runMain(main);
