/**
 * What a task costs Redis, command by command: no-op tasks end to end (create → completed,
 * worker concurrency 10, 50 creates in flight) through the runtime + `TaskWorker`, against raw
 * BullMQ (`Queue.add` + a no-op `Worker`), each on a fresh `redis-server` of its own (so the
 * counts are ours alone), read from `INFO commandstats` (commands run inside scripts included)
 * and `INFO cpu`. Also the fair share (on by default) switched off, to show its part.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/commands.ts
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, TaskWorker } from '../src/runtime/bullmq/index.js';
import { startLocalRedis } from '../test/support/local-redis.js';
import {
  ARGS,
  BENCH_POLICY,
  fmt,
  inPool,
  noopExecutor,
  RAW_JOB_DATA,
  RESULT,
  randomId,
  rawJobOptions,
  runMain,
  TOOL,
  TOOL_OPTIONS,
} from './support.js';

const TASKS = 3000;
const WARM_UP = 300;
const CONCURRENCY = 10;
const IN_FLIGHT = 50;

interface Stats {
  readonly calls: Map<string, { calls: number; usec: number }>;
  readonly cpuSeconds: number;
}

async function stats(redis: Redis): Promise<Stats> {
  const calls = new Map<string, { calls: number; usec: number }>();
  for (const line of (await redis.info('commandstats')).split('\r\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match) calls.set(match[1] as string, { calls: Number(match[2]), usec: Number(match[3]) });
  }
  const cpu = await redis.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1] ?? 0);
  return { calls, cpuSeconds: seconds('used_cpu_user') + seconds('used_cpu_sys') };
}

/** Runs `tasks` through `run` on a fresh server and returns what Redis did per task. */
async function perTask(
  setUp: (url: string) => Promise<{ run: (n: number) => Promise<void>; close: () => Promise<void> }>,
): Promise<{ commands: Map<string, number>; total: number; scripts: number; cpuUs: number }> {
  const server = await startLocalRedis();
  const inspect = new Redis(server.url);
  try {
    const setup = await setUp(server.url);
    try {
      await setup.run(WARM_UP);
      await inspect.config('RESETSTAT');
      const before = await stats(inspect);
      await setup.run(TASKS);
      const after = await stats(inspect);
      const commands = new Map<string, number>();
      let total = 0;
      for (const [name, { calls }] of after.calls) {
        if (name === 'info' || name.startsWith('config')) continue;
        commands.set(name, calls / TASKS);
        if (name !== 'evalsha' && name !== 'eval') total += calls / TASKS;
      }
      const scripts = ((after.calls.get('evalsha')?.calls ?? 0) + (after.calls.get('eval')?.calls ?? 0)) / TASKS;
      return { commands, total, scripts, cpuUs: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / TASKS };
    } finally {
      await setup.close();
    }
  } finally {
    inspect.disconnect();
    await server.stop();
  }
}

function framework(share: boolean) {
  return async (url: string) => {
    const prefix = 'bench-commands';
    const runtime = new BullmqTaskRuntime({ connection: url, prefix, logger: silentLogger });
    const policy = share ? BENCH_POLICY : { ...BENCH_POLICY, maxRunningTasksPerOwner: null };
    const engine = new TaskEngine({ runtime, policy });
    const worker = new TaskWorker({
      executor: noopExecutor,
      concurrency: CONCURRENCY,
      connection: url,
      prefix,
      logger: silentLogger,
    });
    let left = 0;
    let done: () => void = () => {};
    runtime.subscribe(({ record }) => {
      if (isTerminal(record.status) && --left === 0) done();
    });
    await worker.started;
    return {
      async run(n: number) {
        left = n;
        const finished = new Promise<void>((resolve) => (done = resolve));
        await inPool(n, IN_FLIGHT, () =>
          engine.create({ principal: null }, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS }),
        );
        await finished;
      },
      async close() {
        await worker.close();
        await runtime.close();
      },
    };
  };
}

async function raw(url: string) {
  const client = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue('raw', { connection: client, prefix: 'bench-commands' });
  const worker = new Worker('raw', async () => RESULT, {
    connection: new Redis(url, { maxRetriesPerRequest: null }),
    prefix: 'bench-commands',
    concurrency: CONCURRENCY,
  });
  let left = 0;
  let done: () => void = () => {};
  worker.on('completed', () => {
    if (--left === 0) done();
  });
  await worker.waitUntilReady();
  return {
    async run(n: number) {
      left = n;
      const finished = new Promise<void>((resolve) => (done = resolve));
      await inPool(n, IN_FLIGHT, () => queue.add(TOOL, RAW_JOB_DATA, rawJobOptions(randomId())));
      await finished;
    },
    async close() {
      await worker.close();
      await queue.close();
      client.disconnect();
    },
  };
}

async function main(): Promise<void> {
  const sides = {
    framework: await perTask(framework(true)),
    'framework, fair share off': await perTask(framework(false)),
    'raw BullMQ': await perTask(raw),
  };
  const names = [...new Set(Object.values(sides).flatMap((side) => [...side.commands.keys()]))].sort(
    (a, b) => (sides.framework.commands.get(b) ?? 0) - (sides.framework.commands.get(a) ?? 0),
  );
  const columns = Object.keys(sides);
  console.log(`| per task | ${columns.join(' | ')} |`);
  console.log(`| --- | ${columns.map(() => '---').join(' | ')} |`);
  const row = (label: string, value: (side: (typeof sides)['framework']) => string) =>
    console.log(`| ${label} | ${Object.values(sides).map(value).join(' | ')} |`);
  row('**scripts sent (EVALSHA)**', (side) => fmt(side.scripts, 2));
  row('**Redis commands run (inside scripts too)**', (side) => fmt(side.total, 1));
  row('**Redis CPU, µs**', (side) => fmt(side.cpuUs, 1));
  for (const name of names) {
    if (name === 'evalsha' || name === 'eval') continue;
    row(name, (side) => fmt(side.commands.get(name) ?? 0, 2));
  }
}

runMain(main);
