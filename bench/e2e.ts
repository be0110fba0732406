/**
 * Benchmark 2: end-to-end no-op tasks per second (create → completed) at worker concurrency 1,
 * 10 and 50. Framework: `TaskEngine.create` on `BullmqTaskRuntime` + a `TaskWorker` with a no-op
 * executor, done when the runtime reports the record `completed`. Raw: `Queue.add` + a BullMQ
 * `Worker` with a no-op processor, done at the Worker's `completed` event. Same Redis, same
 * process, same job options, at most 50 creations in flight on both sides.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/e2e.ts
 */
import { Queue, Worker } from 'bullmq';
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
  interleaved,
  measure,
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

const LEVELS = [
  { concurrency: 1, n: 1000 },
  { concurrency: 10, n: 3000 },
  { concurrency: 50, n: 3000 },
] as const;
const ROUNDS = 3;
const CREATES_IN_FLIGHT = 50;

/** Counts completions and resolves when `n` have arrived since `expect(n)`. */
class Countdown {
  private left = 0;
  private done: (() => void) | undefined;
  expect(n: number): Promise<void> {
    this.left = n;
    return new Promise((resolve) => {
      this.done = resolve;
    });
  }
  tick(): void {
    if (--this.left === 0) this.done?.();
  }
}

async function main(): Promise<void> {
  const prefix = uniquePrefix('e2e');
  const caller = { principal: null };
  const rows: Row[] = [];
  try {
    for (const level of LEVELS) {
      // Fresh queues per level, so no level inherits another's leftovers.
      const queueName = `c${level.concurrency}`;
      const runtime = new BullmqTaskRuntime({
        connection: REDIS_URL,
        prefix,
        queue: `fw-${queueName}`,
        logger: silentLogger,
      });
      const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
      const taskWorker = new TaskWorker({
        executor: noopExecutor,
        concurrency: level.concurrency,
        connection: REDIS_URL,
        prefix,
        queue: `fw-${queueName}`,
        logger: silentLogger,
      });
      const fwDone = new Countdown();
      runtime.subscribe(({ record }) => {
        if (isTerminal(record.status)) fwDone.tick();
      });

      const rawClient = redisClient();
      const rawQueue = new Queue(`raw-${queueName}`, { connection: rawClient, prefix });
      const rawWorker = new Worker(`raw-${queueName}`, async () => RESULT, {
        connection: redisClient(),
        prefix,
        concurrency: level.concurrency,
      });
      const rawDone = new Countdown();
      rawWorker.on('completed', () => rawDone.tick());
      await Promise.all([taskWorker.started, rawWorker.waitUntilReady()]);

      const framework = async (n: number) => {
        const finished = fwDone.expect(n);
        await inPool(n, CREATES_IN_FLIGHT, () => engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS }));
        await finished;
      };
      const raw = async (n: number) => {
        const finished = rawDone.expect(n);
        await inPool(n, CREATES_IN_FLIGHT, () => rawQueue.add(TOOL, RAW_JOB_DATA, rawJobOptions(randomId())));
        await finished;
      };

      try {
        await framework(200);
        await raw(200);
        const samples = await interleaved(ROUNDS, {
          framework: () => measure(() => framework(level.n)),
          raw: () => measure(() => raw(level.n)),
        });
        const rate = (s: { ms: number }) => (level.n / s.ms) * 1000;
        const fw = median(samples.framework.map(rate));
        const base = median(samples.raw.map(rate));
        const ratio = median(samples.framework.map((s, i) => rate(s) / rate(samples.raw[i] as typeof s)));
        const cpu = (list: { cpuUs: number }[]) => fmt(median(list.map((s) => s.cpuUs / level.n)));
        console.log(
          `concurrency ${level.concurrency}: framework ${fmt(fw)}/s (${cpu(samples.framework)} µs Node CPU/task), ` +
            `raw BullMQ ${fmt(base)}/s (${cpu(samples.raw)} µs/job); rounds fw [${samples.framework.map((s) => fmt(rate(s))).join(', ')}] ` +
            `raw [${samples.raw.map((s) => fmt(rate(s))).join(', ')}]`,
        );
        rows.push({
          bench: '2 end-to-end',
          metric: `no-op tasks/s, worker concurrency ${level.concurrency}`,
          framework: `${fmt(fw)}/s`,
          baseline: `${fmt(base)}/s`,
          ratio,
          target: '>= 0.7',
        });
      } finally {
        await taskWorker.close();
        await runtime.close();
        await rawWorker.close();
        await rawQueue.close();
        rawClient.disconnect();
      }
    }
  } finally {
    await deleteKeysUnder(prefix);
  }
  report(rows);
}

runMain(main);
