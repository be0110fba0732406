/**
 * Generator speed, measured against the TypeScript 7 type check of the same project in the same
 * run: a synthetic app of 500 task methods in 100 files (see synthetic-project.ts).
 *
 *   cold: `tsc --noEmit -p` vs one `mcp-taskgen` process (fresh Node, nothing cached), each run
 *         `ROUNDS` times alternately (ABAB), medians compared.
 *   watch: a long-lived watcher; one source file is edited, and the time from the write to the
 *          regenerated module being on disk is recorded, `EDITS` times.
 *
 *     node --conditions=mcp-task-server-source --import tsx bench/generator/run.ts [rounds] [edits]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { type WatchCycle, watchProject } from '../../src/generator/watch.js';
import { writeSyntheticProject } from './synthetic-project.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const EDITS = Number(process.argv[3] ?? 10);
const REPO = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(REPO, 'node_modules/.bin/tsc');
const CLI = path.join(REPO, 'cli/mcp-taskgen.ts');
const COLD_RUN = path.join(import.meta.dirname, 'cold-run.ts');
const JS_TYPECHECK = path.join(import.meta.dirname, 'js-typecheck.ts');

const project = writeSyntheticProject(path.join(import.meta.dirname, '.tmp/project'));

/**
 * CPU time (user + system) of this process's finished children, from /proc (Linux): unlike wall
 * time it hardly moves when other jobs load the machine, so ratios stay comparable across runs.
 */
function childCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of stat(5) (cutime, cstime), counted from field 3 after the command name.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

function timed(
  command: string,
  args: readonly string[],
): { ms: number; cpuMs: number | undefined; status: number; output: string } {
  const started = performance.now();
  const cpuBefore = childCpuMs();
  const result = spawnSync(command, args, { cwd: REPO, encoding: 'utf8' });
  const cpuAfter = childCpuMs();
  return {
    ms: performance.now() - started,
    cpuMs: cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined,
    status: result.status ?? -1,
    output: `${result.stdout}${result.stderr}`,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const tscRuns: number[] = [];
const jsTscRuns: number[] = [];
const cliRuns: number[] = [];
const cpu = { tsc: [] as number[], cli: [] as number[], jsTsc: [] as number[] };
const generateRuns: number[] = [];
const tsxRun = (script: string, ...args: string[]) =>
  timed(process.execPath, ['--conditions=mcp-task-server-source', '--import', 'tsx', script, ...args]);
for (let round = 0; round < ROUNDS; round++) {
  const runTsc = () => timed(TSC, ['--noEmit', '-p', project.tsconfig]);
  // The CLI process as users run it (tsx compiles the generator's sources on the fly, which the
  // published, compiled bin does not).
  const runCli = () => tsxRun(CLI, '-p', project.tsconfig, '-o', project.out);
  // Alternate the order (ABAB/BABA) so that neither side always runs on a warmer disk cache.
  let tsc: ReturnType<typeof timed>;
  let cli: ReturnType<typeof timed>;
  if (round % 2 === 0) {
    tsc = runTsc();
    cli = runCli();
  } else {
    cli = runCli();
    tsc = runTsc();
  }
  if (tsc.status !== 0) throw new Error(`the synthetic project does not type-check:\n${tsc.output}`);
  if (cli.status !== 0) throw new Error(`mcp-taskgen failed:\n${cli.output}`);
  // The generator alone, without Node's start-up and module loading, in a fresh process too.
  const { generateMs } = JSON.parse(tsxRun(COLD_RUN, project.tsconfig, project.out).output) as { generateMs: number };
  // The type check of the engine the generator runs on (TypeScript 6, JavaScript), in the same kind of process.
  const jsTsc = tsxRun(JS_TYPECHECK, project.tsconfig);
  if (jsTsc.status !== 0)
    throw new Error(`the synthetic project does not type-check with TypeScript 6:\n${jsTsc.output}`);
  jsTscRuns.push(jsTsc.ms);
  tscRuns.push(tsc.ms);
  cliRuns.push(cli.ms);
  if (tsc.cpuMs !== undefined) cpu.tsc.push(tsc.cpuMs);
  if (cli.cpuMs !== undefined) cpu.cli.push(cli.cpuMs);
  if (jsTsc.cpuMs !== undefined) cpu.jsTsc.push(jsTsc.cpuMs);
  generateRuns.push(generateMs);
}

const cycles: WatchCycle[] = [];
const handle = watchProject({
  tsconfig: project.tsconfig,
  out: project.out,
  cwd: REPO,
  log: () => {},
  onCycle: (cycle) => cycles.push(cycle),
});
const waitForCycle = async (count: number): Promise<WatchCycle> => {
  while (cycles.length <= count) await new Promise((resolve) => setTimeout(resolve, 2));
  return cycles[count] as WatchCycle;
};
const initial = await waitForCycle(0);
const original = readFileSync(project.sampleFile, 'utf8');
const watchRuns: number[] = [];
const watchCpu: number[] = [];
for (let edit = 1; edit <= EDITS; edit++) {
  // A new description each time: the output really changes, so every edit ends in a write.
  const edited = original.replace('/** Searches records. */', `/** Searches records (edit ${edit}). */`);
  const writtenAt = performance.now();
  const cpuBefore = process.cpuUsage();
  writeFileSync(project.sampleFile, edited);
  const cycle = await waitForCycle(edit);
  const cpuUsed = process.cpuUsage(cpuBefore);
  watchCpu.push((cpuUsed.user + cpuUsed.system) / 1000);
  if (cycle.outcome !== 'written') throw new Error(`watch run ${edit} ended with '${cycle.outcome}'`);
  watchRuns.push(performance.now() - writtenAt);
}
await handle.stop();
writeFileSync(project.sampleFile, original);

const ms = (value: number) => `${Math.round(value)} ms`;
const tscMedian = median(tscRuns);
const cliMedian = median(cliRuns);
process.stdout.write(
  [
    `synthetic project: ${project.methodCount} methods in 100 files (${path.relative(REPO, project.dir)})`,
    `tsc --noEmit (TypeScript 7):        median ${ms(tscMedian)}   runs ${tscRuns.map(ms).join(', ')}`,
    `mcp-taskgen process (tsx):          median ${ms(cliMedian)}   runs ${cliRuns.map(ms).join(', ')}`,
    `  of which generate() itself:       median ${ms(median(generateRuns))}`,
    `cold ratio mcp-taskgen / tsc:       ${(cliMedian / tscMedian).toFixed(2)}x`,
    `type check with TypeScript 6 (JS, the generator's own engine, tsx process): median ${ms(median(jsTscRuns))}`,
    `cold ratio mcp-taskgen / that check: ${(cliMedian / median(jsTscRuns)).toFixed(2)}x (target <= 0.5x); generate() alone: ${(median(generateRuns) / median(jsTscRuns)).toFixed(2)}x`,
    `watch: first run ${ms(initial.durationMs)}; one-file edit → module on disk: median ${ms(median(watchRuns))}, max ${ms(Math.max(...watchRuns))} (target <= 150 ms)`,
    `CPU time (user + system), less sensitive to other load: tsc ${ms(median(cpu.tsc))}, mcp-taskgen process ${ms(median(cpu.cli))}, TypeScript 6 check ${ms(median(cpu.jsTsc))}, ratio ${(median(cpu.cli) / median(cpu.jsTsc)).toFixed(2)}x; watch edit ${ms(median(watchCpu))} median`,
    `load average at the end: ${loadavg()
      .map((load) => load.toFixed(1))
      .join(', ')}`,
    '',
  ].join('\n'),
);
