/**
 * Benchmark 9: what idempotent creation and priority cost a create. `TaskEngine.create` of the
 * same tool and arguments with a fresh idempotency key each time, with a repeated key (the
 * existing task is returned), and with a priority, against the same create without them, on
 * the in-process runtime (nothing runs: concurrency 0; priority only on BullMQ, where it
 * picks another Redis structure) and on BullMQ (no worker; real Redis,
 * its own key prefix, deleted at the end). Each ratio is policy / plain throughput, median of
 * interleaved rounds, 50 creates in flight (and one at a time on BullMQ, where a create is
 * one Redis round trip).
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/policy-creates.ts
 */
import { TaskEngine } from '../src/engine/engine.js';
import type { TaskOutcome } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime } from '../src/runtime/bullmq/index.js';
import { MemoryTaskRuntime } from '../src/runtime/memory/memory-runtime.js';
import {
  ARGS,
  BENCH_POLICY,
  deleteKeysUnder,
  fmt,
  inPool,
  interleaved,
  measure,
  median,
  REDIS_URL,
  type Row,
  randomId,
  report,
  runMain,
  TOOL,
  TOOL_OPTIONS,
  uniquePrefix,
} from './support.js';

const ROUNDS = 5;
const caller = { principal: 'bench' };

/** A create with a policy, against the same create without it. */
interface Case {
  readonly name: string;
  readonly policy: (index: number) => Record<string, unknown>;
}

/** One key per round and create: every create claims a fresh key. */
let round = 0;
const CASES: readonly Case[] = [
  {
    name: 'idempotent create (a fresh key each)',
    policy: (i) => ({ idempotencyKey: `k-${round}-${i}-${randomId()}` }),
  },
  { name: 'repeated idempotent create (the first task returned)', policy: () => ({ idempotencyKey: 'repeated' }) },
  { name: 'create with a priority', policy: () => ({ toolPriority: 5 }) },
];

async function compare(
  engine: TaskEngine,
  runtimeName: string,
  cases: readonly Case[],
  shape: { n: number; inFlight: number },
): Promise<Row[]> {
  const plain = () => engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS });
  const rows: Row[] = [];
  for (const policyCase of cases) {
    const withPolicy = (i: number) =>
      engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS, ...policyCase.policy(i) });
    // Warm-up: JIT, scripts loaded, and the repeated key's first task made.
    await inPool(Math.min(shape.n, 2000), shape.inFlight, withPolicy);
    await inPool(Math.min(shape.n, 2000), shape.inFlight, () => plain());
    const run = (op: (i: number) => Promise<unknown>) => () => {
      round++;
      return measure(() => inPool(shape.n, shape.inFlight, op));
    };
    const samples = await interleaved(ROUNDS, { policy: run(withPolicy), plain: run(() => plain()) });
    const rate = (s: { ms: number }) => (shape.n / s.ms) * 1000;
    const ratio = median(samples.policy.map((s, i) => rate(s) / rate(samples.plain[i] as typeof s)));
    const cpu = (list: { cpuUs: number }[]) => fmt(median(list.map((s) => s.cpuUs / shape.n)));
    console.log(
      `${runtimeName}, ${policyCase.name}, ${shape.inFlight} in flight: ${fmt(median(samples.policy.map(rate)))}/s ` +
        `(${cpu(samples.policy)} µs CPU each), plain ${fmt(median(samples.plain.map(rate)))}/s (${cpu(samples.plain)} µs); ` +
        `rounds [${samples.policy.map((s) => fmt(rate(s))).join(', ')}] plain [${samples.plain.map((s) => fmt(rate(s))).join(', ')}]`,
    );
    rows.push({
      bench: '9 policy creates',
      metric: `${policyCase.name}, ${runtimeName}, ${shape.inFlight} in flight`,
      framework: `${fmt(median(samples.policy.map(rate)))}/s (${cpu(samples.policy)} µs CPU)`,
      baseline: `${fmt(median(samples.plain.map(rate)))}/s (${cpu(samples.plain)} µs CPU, plain create)`,
      ratio,
    });
  }
  return rows;
}

/** Never called: with concurrency 0 nothing runs. */
const idle = {
  async execute(): Promise<TaskOutcome> {
    throw new Error('nothing runs in this benchmark');
  },
};

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const policyCase of CASES.slice(0, 2)) {
    // A runtime per case: the tasks made stay in memory for their TTL.
    const memory = new MemoryTaskRuntime({ executor: idle, concurrency: 0 });
    try {
      const engine = new TaskEngine({ runtime: memory, policy: BENCH_POLICY });
      rows.push(...(await compare(engine, 'in process', [policyCase], { n: 5000, inFlight: 50 })));
    } finally {
      await memory.close();
    }
  }

  const prefix = uniquePrefix('policy-creates');
  const bullmq = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue: 'creates', logger: silentLogger });
  try {
    const engine = new TaskEngine({ runtime: bullmq, policy: BENCH_POLICY });
    await engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS });
    rows.push(...(await compare(engine, 'BullMQ', CASES, { n: 800, inFlight: 1 })));
    rows.push(...(await compare(engine, 'BullMQ', CASES, { n: 1500, inFlight: 50 })));
  } finally {
    await bullmq.close();
    await deleteKeysUnder(prefix);
  }
  report(rows);
}

runMain(main);
