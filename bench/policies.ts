/**
 * Benchmark 8: what a retry and timeout policy costs a run that succeeds. The same no-op
 * method behind two tools of one manifest, `plain` (no policy) and `guarded`
 * (`retry: { attempts: 5 }`, `timeoutMs: 60_000`), each task created and run to `completed`
 * through the engine, the real `ToolRegistry` and the in-process runtime, 50 in flight. The
 * ratio is guarded / plain throughput, median of interleaved rounds. (On BullMQ a run that
 * succeeds makes no extra Redis call for its policy; the difference is this tool-layer work.)
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/policies.ts
 */
import { z } from 'zod';
import { TaskEngine } from '../src/engine/engine.js';
import { Task } from '../src/index.js';
import { MemoryTaskRuntime } from '../src/runtime/memory/memory-runtime.js';
import { defineTaskManifest, defineTaskTool } from '../src/tools/definition.js';
import { ToolRegistry } from '../src/tools/registry.js';
import { BENCH_POLICY, fmt, inPool, interleaved, measure, median, type Row, report, runMain } from './support.js';

const N = 3000;
const IN_FLIGHT = 50;
const ROUNDS = 6;

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
  const engine = new TaskEngine({ runtime, policy: BENCH_POLICY });
  const caller = { principal: 'bench' };
  const runOne = (name: string) => async () => {
    const created = await engine.create(caller, { tool: name, args: {} });
    const done = await engine.waitForTerminal(caller, created.taskId);
    if (done.status !== 'completed') throw new Error(`${name} ended ${done.status}`);
  };
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
  } finally {
    await runtime.close();
  }
  report(rows);
}

runMain(main);
