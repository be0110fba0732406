/**
 * Benchmark 1: task creation through the engine and the BullMQ runtime (`TaskEngine.create` →
 * `BullmqTaskRuntime.create`: the record and the job, sent together) against a raw BullMQ `Queue.add` of
 * the same payload with the same job options. Nothing consumes the jobs.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/create.ts
 */
import { Queue } from 'bullmq';
import { TaskEngine } from '../src/engine/engine.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime } from '../src/runtime/bullmq/index.js';
import {
  ARGS,
  BENCH_POLICY,
  deleteKeysUnder,
  fmt,
  inPool,
  interleaved,
  measure,
  median,
  RAW_JOB_DATA,
  REDIS_URL,
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

const SHAPES = [
  { name: 'one at a time', inFlight: 1, n: 1500 },
  { name: '50 in flight', inFlight: 50, n: 5000 },
] as const;
const ROUNDS = 5;

async function main(): Promise<void> {
  const prefix = uniquePrefix('create');
  const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue: 'framework', logger: silentLogger });
  const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
  const rawClient = redisClient();
  const raw = new Queue('raw', { connection: rawClient, prefix });
  const caller = { principal: null };

  const framework = () => engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS });
  const rawAdd = () => raw.add(TOOL, RAW_JOB_DATA, rawJobOptions(randomId()));

  const rows: Row[] = [];
  try {
    // Warm-up: connections up and scripts loaded (one call first), then JIT warm.
    await framework();
    await rawAdd();
    await inPool(1000, 50, framework);
    await inPool(1000, 50, rawAdd);

    for (const shape of SHAPES) {
      const run = (op: () => Promise<unknown>) => () => measure(() => inPool(shape.n, shape.inFlight, op));
      const samples = await interleaved(ROUNDS, { framework: run(framework), raw: run(rawAdd) });
      const rate = (s: { ms: number }) => (shape.n / s.ms) * 1000;
      const fw = median(samples.framework.map(rate));
      const base = median(samples.raw.map(rate));
      // Rounds are paired (run back to back), so the ratio is the median of per-round ratios.
      const ratio = median(samples.framework.map((s, i) => rate(s) / rate(samples.raw[i] as typeof s)));
      const fwCpu = median(samples.framework.map((s) => s.cpuUs / shape.n));
      const baseCpu = median(samples.raw.map((s) => s.cpuUs / shape.n));
      console.log(
        `${shape.name}: framework ${fmt(fw)}/s (${fmt(fwCpu)} µs Node CPU/op), raw Queue.add ${fmt(base)}/s (${fmt(baseCpu)} µs/op); ` +
          `rounds fw [${samples.framework.map((s) => fmt(rate(s))).join(', ')}] raw [${samples.raw.map((s) => fmt(rate(s))).join(', ')}]`,
      );
      rows.push({
        bench: '1 create',
        metric: `creates/s, ${shape.name}`,
        framework: `${fmt(fw)}/s`,
        baseline: `${fmt(base)}/s`,
        ratio,
        target: '>= 0.7',
      });
    }
  } finally {
    await runtime.close();
    await raw.close();
    rawClient.disconnect();
    await deleteKeysUnder(prefix);
  }
  report(rows);
}

runMain(main);
