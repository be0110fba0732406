/**
 * By hand, not a comparison: where the slowest plain `tools/call`s of bench/tail.ts spend their
 * time. One server from built output (`dist/bench/tail-server.js`, as tail.ts runs it) started
 * with `TAIL_TRACE=1`, which records, on the server's clock, every garbage collection
 * (`PerformanceObserver('gc')`), every request's arrival and finished answer
 * (`diagnostics_channel` `http.server.request.start` / `http.server.response.finish`) and the
 * event loop's delay. This process (the client) records each call's send and answer and its own
 * collections. Both sides use CLOCK_MONOTONIC (`process.hrtime`), one clock for every process.
 *
 * Each call slower than the p99 is put down to what overlapped it: a server collection, a client
 * collection, the server's own time on it (request in → answer finished, less collections), or
 * nothing seen (the time between the processes: the kernel, the scheduler, another process).
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/tail-trace.ts [framework|bare|floor] [2026-07-28|2025-11-25] [calls]
 *   TAIL_SERVER_FLAGS=--max-semi-space-size=2 node ... bench/tail-trace.ts     # with a V8 setting
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fmt, percentile, postJsonRpc, printTable } from './support.js';

const kind = (process.argv[2] ?? 'framework') as 'framework' | 'bare' | 'floor';
const revision = (process.argv[3] ?? '2026-07-28') as '2026-07-28' | '2025-11-25';
const CALLS = Number(process.argv[4] ?? 20_000);
const WARMUP = 1000;
const SERVER_FLAGS = (process.env.TAIL_SERVER_FLAGS ?? '').split(' ').filter(Boolean);
const root = fileURLToPath(new URL('..', import.meta.url));

interface Span {
  readonly start: number;
  readonly end: number;
}
interface Gc extends Span {
  readonly minor: boolean;
}
interface ServerTrace {
  readonly gcs: Gc[];
  /** Arrival → `res.end()`, and the server's CPU (all threads) in between. */
  readonly requests: (Span & { readonly cpuMs: number })[];
  readonly loopDelay: { p50: number; p99: number; max: number };
  readonly cpu: NodeJS.CpuUsage;
}

// CLOCK_MONOTONIC, one clock for every process on the machine; `performance` times are offset from it.
const wall = () => Number(process.hrtime.bigint()) / 1e6;
const offset = wall() - performance.now();

const clientGcs: Gc[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const detail = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail;
    const start = offset + entry.startTime;
    clientGcs.push({ start, end: start + entry.duration, minor: detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR });
  }
}).observe({ entryTypes: ['gc'] });

const child = spawn(process.execPath, [...SERVER_FLAGS, `${root}dist/bench/tail-server.js`, kind], {
  cwd: root,
  env: { ...process.env, TAIL_TRACE: '1' },
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
});
const url = await new Promise<string>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).on('line', (line) => {
    if (line.startsWith('READY ')) resolve((JSON.parse(line.slice(6)) as { url: string }).url);
  });
});
const ask = <T>(type: string) =>
  new Promise<T>((resolve) => {
    child.once('message', (message) => resolve(message as T));
    child.send({ id: -1, type });
  });

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let nextId = 1;
function post(body: unknown, headers: Record<string, string>): Promise<{ headers: http.IncomingHttpHeaders }> {
  return postJsonRpc(url, body, headers, agent);
}

let call: () => Promise<unknown>;
if (revision === '2026-07-28') {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': revision,
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-server-bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  call = () =>
    post(
      {
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name: 'greet', arguments: { name: 'bench' }, _meta: meta },
      },
      { 'mcp-protocol-version': revision, 'mcp-method': 'tools/call', 'mcp-name': 'greet' },
    );
} else {
  const init = await post(
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'trace', version: '1.0.0' } },
    },
    {},
  );
  const headers = { 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': revision };
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  call = () =>
    post(
      { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'greet', arguments: { name: 'bench' } } },
      headers,
    );
}

/** Time this process and the server spent runnable but waiting for a core (/proc/<pid>/schedstat, ns). */
const { readFileSync } = await import('node:fs');
const waited = (pid: number) => {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`))
    total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[1]);
  const main = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]);
  return { total: total / 1e6, main: main / 1e6 };
};
const { readdirSync } = await import('node:fs');
for (let i = 0; i < WARMUP; i++) await call();
await ask('trace-start');
const waitedBefore = { client: waited(process.pid), server: waited(child.pid as number) };
clientGcs.length = 0;
const cpuBefore = process.cpuUsage();
const calls: Span[] = [];
for (let i = 0; i < CALLS; i++) {
  const start = wall();
  await call();
  calls.push({ start, end: wall() });
}
const clientCpu = process.cpuUsage(cpuBefore);
const trace = await ask<ServerTrace>('trace');
const waitedAfter = { client: waited(process.pid), server: waited(child.pid as number) };
const perCall = (side: 'client' | 'server', which: 'total' | 'main') =>
  fmt(((waitedAfter[side][which] - waitedBefore[side][which]) / CALLS) * 1000);
child.kill('SIGTERM');
agent.destroy();

const ms = (span: Span) => span.end - span.start;
const overlap = (a: Span, b: Span) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
const sum = (spans: readonly Span[], within: Span) => spans.reduce((total, one) => total + overlap(one, within), 0);
const latencies = calls.map(ms);
const p50 = percentile(latencies, 50);
const p99 = percentile(latencies, 99);
// The server's request spans in order, one per call (one call at a time on one socket).
const requests = trace.requests;
if (requests.length !== calls.length)
  console.log(`(${requests.length} server request spans for ${calls.length} calls: matched by time)`);
let cursor = 0;
const serverSpanOf = (one: Span): (Span & { cpuMs: number }) | undefined => {
  // A request arrives after its call was sent (its 'finish' may come after the client's end).
  while (cursor < requests.length && (requests[cursor] as Span).start < one.start) cursor++;
  const candidate = requests[cursor];
  return candidate && candidate.start <= one.end ? candidate : undefined;
};
const causes = { 'server GC': 0, 'client GC': 0, 'server work': 0, 'between the processes': 0 };
const slow: string[][] = [];
let slowCount = 0;
const gaps = { before: 0, after: 0 };
const THRESHOLD = Number(process.env.TAIL_SLOW_X ?? 3) * p50;
for (const one of calls) {
  const server = serverSpanOf(one);
  if (ms(one) <= THRESHOLD) continue;
  slowCount++;
  const serverGc = sum(trace.gcs, one);
  const clientGc = sum(clientGcs, one);
  const serverMs = server ? ms(server) : 0;
  const serverWork = Math.max(0, serverMs - sum(trace.gcs, server ?? one));
  const rest = Math.max(0, ms(one) - serverGc - clientGc - serverWork);
  const share = {
    'server GC': serverGc,
    'client GC': clientGc,
    'server work': serverWork,
    'between the processes': rest,
  };
  const top = (Object.entries(share) as [keyof typeof causes, number][]).sort((a, b) => b[1] - a[1])[0] as [
    keyof typeof causes,
    number,
  ];
  causes[top[0]]++;
  if (top[0] === 'between the processes' && server) {
    gaps.before += server.start - one.start;
    gaps.after += one.end - server.end;
  }
  if (slow.length < 25)
    slow.push([
      fmt(ms(one), 2),
      fmt(serverMs, 2),
      fmt(server?.cpuMs ?? 0, 2),
      fmt(serverGc, 2),
      fmt(clientGc, 2),
      fmt(rest, 2),
      server ? `${fmt(server.start - one.start, 2)} / ${fmt(one.end - server.end, 2)}` : '—',
      top[0],
    ]);
}
const minor = (gcs: readonly Gc[]) => gcs.filter((gc) => gc.minor);
const gcLine = (name: string, gcs: readonly Gc[]) => {
  const durations = gcs.map(ms);
  const m = minor(gcs);
  return `${name}: ${fmt((gcs.length / CALLS) * 1000, 1)} collections per 1,000 calls (${m.length} minor, ${gcs.length - m.length} major), median ${fmt(percentile(durations.length ? durations : [0], 50), 2)} ms, max ${fmt(Math.max(0, ...durations), 2)} ms`;
};
console.log(
  `${kind} ${revision}, ${CALLS} calls after ${WARMUP} warm-up: p50 ${fmt(p50, 3)} ms, p99 ${fmt(p99, 3)} ms (${fmt(p99 / p50, 2)}×), p99.9 ${fmt(percentile(latencies, 99.9), 2)} ms`,
);
const serverDurations = requests.map(ms);
console.log(
  `server, request in → res.end(): p50 ${fmt(percentile(serverDurations, 50), 3)} ms, p99 ${fmt(percentile(serverDurations, 99), 3)} ms; CPU ${fmt(((trace.cpu.user + trace.cpu.system) / CALLS) | 0)} µs/call; client CPU ${fmt(((clientCpu.user + clientCpu.system) / CALLS) | 0)} µs/call`,
);
console.log(
  `server event-loop delay (monitorEventLoopDelay, 1 ms resolution): p50 ${fmt(trace.loopDelay.p50, 2)} ms, p99 ${fmt(trace.loopDelay.p99, 2)} ms, max ${fmt(trace.loopDelay.max, 2)} ms`,
);
console.log(gcLine('server GCs', trace.gcs));
console.log(gcLine('client GCs', clientGcs));
console.log(
  `time runnable but waiting for a core (schedstat; main thread / all threads): client ${perCall('client', 'main')} / ${perCall('client', 'total')} µs/call, server ${perCall('server', 'main')} / ${perCall('server', 'total')} µs/call`,
);
console.log(
  `calls over ${fmt(THRESHOLD, 3)} ms (${fmt(THRESHOLD / p50, 1)}× p50): ${slowCount} (${fmt((slowCount / CALLS) * 100, 2)}%), by what took most of each:`,
  causes,
);
console.log(
  `of the calls "between the processes": ${fmt(gaps.before, 1)} ms in all from the client's send to the server's request, ${fmt(gaps.after, 1)} ms from the server's finished answer to the client's end`,
);
printTable(
  ['call ms', 'server ms', 'server CPU ms', 'server GC ms', 'client GC ms', 'unseen ms', 'gap before / after', 'most'],
  slow,
);
