/**
 * Benchmark 3: MCP over Streamable HTTP, protocol 2026-07-28 (stateless, raw JSON-RPC POSTs
 * shaped like test/e2e/support.ts `rpc2026`). Task creation and `tasks/get` on the framework
 * against a plain (non-task) `tools/call` served by the SDK alone; closed loops with 1 and 50
 * concurrent clients; p50/p99 latency and throughput.
 *
 * The servers run in a child process (bench/http-server.ts). The load generator uses node:http
 * with keep-alive (one socket per client) and shares the 2 cores with it and with Redis.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/http.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import {
  ARGS,
  deleteKeysUnder,
  fmt,
  median,
  now,
  percentile,
  postJsonRpc,
  type Row,
  report,
  runMain,
  sleep,
  TOOL,
  uniquePrefix,
} from './support.js';

const CONCURRENCY = [1, 50] as const;
const CELL_MS = 1200;
const WARMUP_MS = 400;
const ROUNDS = 3;
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

interface Urls {
  bare: string;
  memory: string;
  bullmq: string;
}

// ---------------------------------------------------------------------------------------------
// A minimal 2026-07-28 client on node:http

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
let nextId = 1;

async function rpc(url: string, method: string, params: Record<string, unknown>, name: string): Promise<unknown> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-server-bench', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
      },
    },
  });
  const answer = await postJsonRpc(
    url,
    body,
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': name },
    agent,
  );
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.message)}`);
  if (!answer.message) throw new Error('an empty answer');
  if (answer.message.error) throw new Error(answer.message.error.message);
  return answer.message.result;
}

// ---------------------------------------------------------------------------------------------

interface Cell {
  readonly throughput: number;
  readonly p50: number;
  readonly p99: number;
}

/** `clients` closed loops calling `op` for `ms`; every call's latency is kept. */
async function closedLoop(
  clients: number,
  ms: number,
  op: (client: number, i: number) => Promise<unknown>,
): Promise<Cell> {
  const latencies: number[] = [];
  const start = now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; now() < end; i++) {
        const t = now();
        await op(client, i);
        latencies.push(now() - t);
      }
    }),
  );
  const elapsed = now() - start;
  return {
    throughput: (latencies.length / elapsed) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

async function startServer(prefix: string): Promise<{ child: ChildProcess; urls: Urls }> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=mcp-task-server-source',
      '--import',
      'tsx',
      new URL('./http-server.ts', import.meta.url).pathname,
      prefix,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const urls = await new Promise<Urls>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the benchmark server did not start within 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`the benchmark server exited with ${code}`)));
    lines.on('line', (line) => {
      if (!line.startsWith('READY ')) return;
      clearTimeout(timer);
      resolve(JSON.parse(line.slice(6)) as Urls);
    });
  });
  return { child, urls };
}

async function main(): Promise<void> {
  const prefix = uniquePrefix('http');
  const { child, urls } = await startServer(prefix);
  const rows: Row[] = [];
  try {
    const greet = (url: string) => () =>
      rpc(url, 'tools/call', { name: 'greet', arguments: { name: 'bench' } }, 'greet');
    const create = (url: string) => () => rpc(url, 'tools/call', { name: TOOL, arguments: ARGS }, TOOL);

    // Tasks for `tasks/get` to read, one per client. (In-process tasks complete at once, so their
    // `tasks/get` inlines the result; with `workers: 0` the BullMQ ones stay `working`.)
    const createIds = async (url: string) => {
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push(((await create(url)()) as { taskId: string }).taskId);
      return ids;
    };
    const memoryIds = await createIds(urls.memory);
    const bullmqIds = await createIds(urls.bullmq);
    await sleep(50);
    const get = (url: string, ids: string[]) => (client: number) => {
      const taskId = ids[client % ids.length] as string;
      return rpc(url, 'tasks/get', { taskId }, taskId);
    };

    // Each op is checked once for the right kind of answer before it is timed.
    const ops = {
      'plain tools/call, bare SDK': greet(urls.bare),
      'plain tools/call, framework': greet(urls.memory),
      'task create, in-process': create(urls.memory),
      'tasks/get, in-process': get(urls.memory, memoryIds),
      'task create, BullMQ': create(urls.bullmq),
      'tasks/get, BullMQ': get(urls.bullmq, bullmqIds),
    };
    type Op = keyof typeof ops;
    for (const [name, op] of Object.entries(ops)) {
      const result = (await op(0)) as { content?: unknown; resultType?: string; taskId?: string };
      const ok = name.startsWith('plain') ? Array.isArray(result.content) : typeof result.taskId === 'string';
      if (!ok) throw new Error(`${name}: unexpected answer ${JSON.stringify(result)}`);
    }
    for (const op of Object.values(ops)) await closedLoop(10, WARMUP_MS, op);

    const table: string[][] = [];
    for (const clients of CONCURRENCY) {
      const cases = Object.fromEntries(
        Object.entries(ops).map(([name, op]) => [name, () => closedLoop(clients, CELL_MS, op)]),
      ) as Record<Op, () => Promise<Cell>>;
      const names = Object.keys(cases) as Op[];
      const samples = Object.fromEntries(names.map((name) => [name, [] as Cell[]])) as Record<Op, Cell[]>;
      for (let round = 0; round < ROUNDS; round++) {
        // Rotate the order each round so no op always runs first or last.
        const order = names.map((_, i) => names[(i + round) % names.length] as Op);
        for (const name of order) samples[name].push(await cases[name]());
      }
      const stat = (name: Op, key: keyof Cell) => median(samples[name].map((cell) => cell[key]));
      for (const name of names) {
        table.push([
          `${clients}`,
          name,
          fmt(stat(name, 'throughput')),
          fmt(stat(name, 'p50'), 2),
          fmt(stat(name, 'p99'), 2),
        ]);
      }
      const ratio = (name: Op, base: Op) =>
        median(samples[name].map((cell, i) => cell.throughput / (samples[base][i] as Cell).throughput));
      const base: Op = 'plain tools/call, bare SDK';
      const rowFor = (name: Op, target: string, against: Op = base): Row => ({
        bench: '3 HTTP',
        metric: `${name} vs ${against === base ? 'bare SDK' : 'framework'} plain call, ${clients} client${clients > 1 ? 's' : ''}`,
        framework: `${fmt(stat(name, 'throughput'))}/s`,
        baseline: `${fmt(stat(against, 'throughput'))}/s`,
        ratio: ratio(name, against),
        target,
      });
      rows.push(
        rowFor('task create, in-process', '>= 0.8'),
        rowFor('tasks/get, in-process', '>= 0.9'),
        rowFor('task create, BullMQ', '>= 0.8'),
        rowFor('tasks/get, BullMQ', '>= 0.9'),
        { ...rowFor('plain tools/call, framework', ''), target: undefined },
      );
    }
    console.log('2026-07-28 over Streamable HTTP (JSON responses), medians of 3 rounds of 1.2 s each');
    const { printTable } = await import('./support.js');
    printTable(['clients', 'op', 'calls/s', 'p50 ms', 'p99 ms'], table);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    agent.destroy();
    await deleteKeysUnder(prefix);
  }
  report(rows);
}

runMain(main);
