/**
 * Benchmark 8: what the policies cost a run that succeeds.
 *
 * - Retry and timeout: the same no-op method behind two tools of one manifest, `plain` (no
 *   policy) and `guarded` (`retry: { attempts: 5 }`, `timeoutMs: 60_000`), each task created
 *   and run to `completed` through the engine, the real `ToolRegistry` and the in-process
 *   runtime, 50 in flight. (On BullMQ a run that succeeds makes no extra Redis call for its
 *   policy; the difference is this tool-layer work.)
 * - A fair share: the same runs of `plain` by one principal under `maxRunningTasksPerPrincipal`
 *   64 (more than ever run at once, so no task waits: what is measured is the bookkeeping)
 *   against no share at all, in process and on BullMQ (a `TaskWorker` of concurrency 10 in this
 *   process, real Redis, its own key prefix, deleted at the end), where a run takes and frees
 *   a slot in Redis.
 *
 * Each ratio is policy / plain throughput, median of interleaved rounds.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/policies.ts
 */
import { z } from 'zod';
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
import { Task } from '../src/index.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, TaskWorker } from '../src/runtime/bullmq/index.js';
import { MemoryTaskRuntime } from '../src/runtime/memory/memory-runtime.js';
import { defineTaskManifest, defineTaskTool } from '../src/tools/definition.js';
import { ToolRegistry } from '../src/tools/registry.js';
import {
  BENCH_POLICY,
  deleteKeysUnder,
  fmt,
  inPool,
  interleaved,
  measure,
  median,
  noopExecutor,
  REDIS_URL,
  type Row,
  report,
  runMain,
  uniquePrefix,
} from './support.js';

const N = 3000;
const IN_FLIGHT = 50;
const ROUNDS = 6;
/** A share no run reaches at `IN_FLIGHT`: the cost of keeping it, never a wait. */
const SHARE = 64;
const BULLMQ_N = 1000;
const BULLMQ_ROUNDS = 4;
const BULLMQ_CONCURRENCY = 10;

export class Noop {
  @Task()
  async run(): Promise<string> {
    return 'done';
  }
}

function tool(name: string, policy: { retry?: { attempts: number }; timeoutMs?: number }) {
  return defineTaskTool<Noop, Record<string, never>>({
    name,
    taskSupport: 'optional',
    inputSchema: { type: 'object' },
    input: z.strictObject({}),
    result: 'text',
    target: { class: Noop, method: 'run' },
    source: 'bench/policies.ts',
    invoke: (target) => target.run(),
    ...policy,
  });
}

async function main(): Promise<void> {
  const manifest = defineTaskManifest({
    formatVersion: 1,
    tools: [tool('plain', {}), tool('guarded', { retry: { attempts: 5 }, timeoutMs: 60_000 })],
  });
  const registry = new ToolRegistry({ manifest, instances: [new Noop()] });
  const runtime = new MemoryTaskRuntime({ executor: registry, concurrency: 8 });
  const engine = new TaskEngine({ runtime, policy: { ...BENCH_POLICY, maxRunningTasksPerOwner: null } });
  const shared = new TaskEngine({ runtime, policy: { ...BENCH_POLICY, maxRunningTasksPerOwner: SHARE } });
  const caller = { principal: 'bench' };
  const runOn = (on: TaskEngine, name: string) => async () => {
    const created = await on.create(caller, { tool: name, args: {} });
    const done = await on.waitForTerminal(caller, created.taskId);
    if (done.status !== 'completed') throw new Error(`${name} ended ${done.status}`);
  };
  const runOne = (name: string) => runOn(engine, name);
  const rows: Row[] = [];
  try {
    // Warm-up: JIT and maps.
    await inPool(2000, IN_FLIGHT, runOne('plain'));
    await inPool(2000, IN_FLIGHT, runOne('guarded'));
    const run = (name: string) => () => measure(() => inPool(N, IN_FLIGHT, runOne(name)));
    const samples = await interleaved(ROUNDS, { guarded: run('guarded'), plain: run('plain') });
    const rate = (s: { ms: number }) => (N / s.ms) * 1000;
    const ratio = median(samples.guarded.map((s, i) => rate(s) / rate(samples.plain[i] as typeof s)));
    const guarded = median(samples.guarded.map(rate));
    const plain = median(samples.plain.map(rate));
    console.log(
      `runs/s: guarded ${fmt(guarded)}, plain ${fmt(plain)}; rounds guarded [${samples.guarded.map((s) => fmt(rate(s))).join(', ')}] plain [${samples.plain.map((s) => fmt(rate(s))).join(', ')}]`,
    );
    rows.push({
      bench: '8 policies',
      metric: `runs/s with retry + timeoutMs, ${IN_FLIGHT} in flight, in process`,
      framework: `${fmt(guarded)}/s`,
      baseline: `${fmt(plain)}/s (no policy)`,
      ratio,
      target: '>= 0.9',
    });

    await inPool(2000, IN_FLIGHT, runOn(shared, 'plain'));
    const share = await interleaved(ROUNDS, {
      shared: () => measure(() => inPool(N, IN_FLIGHT, runOn(shared, 'plain'))),
      plain: run('plain'),
    });
    rows.push(shareRow('in process', share, N));
  } finally {
    await runtime.close();
  }
  rows.push(await bullmqShare());
  report(rows);
}

/** One row: runs/s under a fair share against none, from interleaved samples of `n` runs. */
function shareRow(where: string, samples: Record<'shared' | 'plain', { ms: number; cpuUs: number }[]>, n: number) {
  const rate = (s: { ms: number }) => (n / s.ms) * 1000;
  const ratio = median(samples.shared.map((s, i) => rate(s) / rate(samples.plain[i] as typeof s)));
  const cpu = (list: { cpuUs: number }[]) => fmt(median(list.map((s) => s.cpuUs / n)));
  console.log(
    `${where}, runs/s under a share of ${SHARE}: ${fmt(median(samples.shared.map(rate)))} (${cpu(samples.shared)} µs CPU each), ` +
      `none ${fmt(median(samples.plain.map(rate)))} (${cpu(samples.plain)} µs); rounds [${samples.shared.map((s) => fmt(rate(s))).join(', ')}] ` +
      `none [${samples.plain.map((s) => fmt(rate(s))).join(', ')}]`,
  );
  return {
    bench: '8 policies',
    metric: `runs/s under a fair share (${SHARE}, never reached), ${where}`,
    framework: `${fmt(median(samples.shared.map(rate)))}/s (${cpu(samples.shared)} µs CPU)`,
    baseline: `${fmt(median(samples.plain.map(rate)))}/s (${cpu(samples.plain)} µs CPU, no share)`,
    ratio,
  } satisfies Row;
}

/** Runs to `completed` on BullMQ, one principal, under a share and without one. */
async function bullmqShare(): Promise<Row> {
  const prefix = uniquePrefix('policies');
  const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix, queue: 'shares', logger: silentLogger });
  const worker = new TaskWorker({
    executor: noopExecutor,
    concurrency: BULLMQ_CONCURRENCY,
    connection: REDIS_URL,
    prefix,
    queue: 'shares',
    logger: silentLogger,
  });
  const caller = { principal: 'bench' };
  let left = 0;
  let finished: () => void = () => {};
  runtime.subscribe(({ record }) => {
    if (isTerminal(record.status) && --left === 0) finished();
  });
  const runs = (engine: TaskEngine) => async () => {
    const done = new Promise<void>((resolve) => {
      finished = resolve;
    });
    left = BULLMQ_N;
    await inPool(BULLMQ_N, IN_FLIGHT, () => engine.create(caller, { tool: 'plain', args: {} }));
    await done;
  };
  try {
    await worker.started;
    const none = new TaskEngine({ runtime, policy: { ...BENCH_POLICY, maxRunningTasksPerOwner: null } });
    const shared = new TaskEngine({ runtime, policy: { ...BENCH_POLICY, maxRunningTasksPerOwner: SHARE } });
    await runs(shared)();
    await runs(none)();
    const samples = await interleaved(BULLMQ_ROUNDS, {
      shared: () => measure(runs(shared)),
      plain: () => measure(runs(none)),
    });
    return shareRow(`BullMQ, worker concurrency ${BULLMQ_CONCURRENCY}`, samples, BULLMQ_N);
  } finally {
    await worker.close();
    await runtime.close();
    await deleteKeysUnder(prefix);
  }
}

runMain(main);
