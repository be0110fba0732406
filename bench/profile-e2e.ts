/**
 * Not a benchmark: the framework side of `e2e.ts` alone (runtime + `TaskWorker` in one process,
 * worker concurrency 10, 50 creates in flight) on a `redis-server` of its own, for a CPU profile:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=mcp-task-server-source --import tsx bench/profile-e2e.ts [tasks]
 *
 * Prints Node CPU per task; the profile says where it goes.
 */
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime, TaskWorker } from '../src/runtime/bullmq/index.js';
import { startLocalRedis } from '../test/support/local-redis.js';
import { ARGS, BENCH_POLICY, inPool, noopExecutor, runMain, TOOL, TOOL_OPTIONS } from './support.js';

async function main(): Promise<void> {
  const tasks = Number(process.argv[2] ?? 5000);
  const server = await startLocalRedis();
  const runtime = new BullmqTaskRuntime({ connection: server.url, prefix: 'prof', logger: silentLogger });
  const worker = new TaskWorker({
    executor: noopExecutor,
    concurrency: 10,
    connection: server.url,
    prefix: 'prof',
    logger: silentLogger,
  });
  const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
  let left = 0;
  let done: () => void = () => {};
  runtime.subscribe(({ record }) => {
    if (isTerminal(record.status) && --left === 0) done();
  });
  const run = async (n: number) => {
    left = n;
    const finished = new Promise<void>((resolve) => (done = resolve));
    await inPool(n, 50, () => engine.create({ principal: null }, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS }));
    await finished;
  };
  try {
    await worker.started;
    await run(500);
    const cpu = process.cpuUsage();
    const began = performance.now();
    await run(tasks);
    const used = process.cpuUsage(cpu);
    const ms = performance.now() - began;
    console.log(
      `${tasks} tasks in ${ms.toFixed(0)} ms (${((tasks / ms) * 1000).toFixed(0)}/s), ${((used.user + used.system) / tasks).toFixed(0)} µs Node CPU/task`,
    );
  } finally {
    await worker.close();
    await runtime.close();
    await server.stop();
  }
}

runMain(main);
