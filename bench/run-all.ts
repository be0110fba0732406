/**
 * Runs every benchmark, each in its own process (so none inherits another's heap, JIT state or
 * connections), and prints one summary table of the measured ratios.
 *
 *   npm run bench
 *   node --conditions=mcp-task-server-source --import tsx bench/run-all.ts [create e2e http memory latency scale tail policies policy-creates poll sleep-memory]
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { JSON_MARK, printRows, type Row } from './support.js';

const BENCHMARKS = [
  'create',
  'e2e',
  'http',
  'memory',
  'latency',
  'scale',
  'tail',
  'policies',
  'policy-creates',
  'poll',
  'sleep-memory',
] as const;

function run(name: string): Promise<Row[]> {
  const file = new URL(`./${name}.ts`, import.meta.url).pathname;
  const child = spawn(process.execPath, ['--conditions=mcp-task-server-source', '--import', 'tsx', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const rows: Row[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith(JSON_MARK)) rows.push(...(JSON.parse(line.slice(JSON_MARK.length)) as Row[]));
    else console.log(`  ${line}`);
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      code === 0 ? resolve(rows) : reject(new Error(`bench/${name}.ts exited with ${code}`)),
    );
  });
}

const chosen = process.argv.slice(2);
const names = chosen.length > 0 ? chosen : [...BENCHMARKS];
const all: Row[] = [];
for (const name of names) {
  console.log(`\n=== bench/${name}.ts`);
  const started = Date.now();
  all.push(...(await run(name)));
  console.log(`  (${((Date.now() - started) / 1000).toFixed(0)} s)`);
}
console.log('\n=== Summary (ratio = framework / alternative, measured in the same run)\n');
printRows(all);
