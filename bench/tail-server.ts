/**
 * The server side of bench/tail.ts. It runs from built output (`node dist/bench/tail-server.js`,
 * compiled with the framework by bench/tsconfig.dist.json), one server per process, so that one
 * server's garbage never pauses the other's requests and each process's memory is its own:
 *
 * - `bare`: the SDK alone. A v2 `McpServer` with one `registerTool('greet')` behind the SDK's
 *   own `createMcpHandler` (2026-07-28, per request) and, on the same port, 2025-11-25 sessions
 *   on the SDK's `WebStandardStreamableHTTPServerTransport` (one `McpServer` per session, as the
 *   SDK's examples do, answering on an SSE stream as the framework's sessions do): the plain,
 *   non-task `tools/call` baseline.
 * - `framework`: the conformance fixture on `createTaskServer`, in-process runtime.
 *
 * Prints one `READY {"url": ...}` line, then answers the parent's IPC messages: `memory` (after a
 * forced GC when started with --expose-gc) returns `process.memoryUsage()` (RSS read before that
 * collection) and V8's heap spaces, and `stats` the process CPU, the collections, and the bytes
 * allocated and surviving young collections since the last `stats` (the first `stats` starts that
 * instrumentation; a process that is only asked for `memory` never runs it).
 */
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { app } from '../examples/conformance-fixture/app.js';
import { createTaskServer } from '../src/host/task-server.js';
import { silentLogger } from '../src/observe/logger.js';
import { bareServer, LIFTED_LIMITS, listenOnLoopback } from './bare-sdk.js';

const kind = process.argv[2];
if (kind !== 'bare' && kind !== 'framework' && kind !== 'floor')
  throw new Error('usage: tail-server.js bare|framework|floor');

/**
 * `floor` (bench/tail-trace.ts only): node:http alone, reading the body, parsing it and answering
 * the greeting's JSON in one write: what a call costs on this machine with no MCP server at all.
 */
async function listenFloor(): Promise<{ url: string; close: () => Promise<void> }> {
  return listenOnLoopback(
    async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
      const body = JSON.stringify({
        result: { content: [{ type: 'text', text: 'Hello, bench!' }], resultType: 'complete' },
        jsonrpc: '2.0',
        id,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    async () => {},
  );
}

/** The bare SDK on one port: 2026-07-28 per request, 2025-11-25 in sessions. */
async function listenBare(): Promise<{ url: string; close: () => Promise<void> }> {
  const modern = createMcpHandler(() => bareServer(), { legacy: 'reject' });
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const legacy = async (request: Request, parsedBody: unknown): Promise<Response> => {
    const sessionId = request.headers.get('mcp-session-id');
    const existing = sessionId ? sessions.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(request, { parsedBody });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await bareServer().connect(transport);
    return transport.handleRequest(request, { parsedBody });
  };
  const handle = toNodeHandler({
    fetch: async (request: Request) => {
      const parsedBody = request.method === 'POST' ? await request.json() : undefined;
      return (await isLegacyRequest(request, parsedBody))
        ? legacy(request, parsedBody)
        : modern.fetch(request, { parsedBody });
    },
  });
  return listenOnLoopback(handle, () => modern.close());
}

async function listenFramework(): Promise<{ url: string; close: () => Promise<void> }> {
  // Its live tasks may also reach the number the memory measure retains.
  const server = createTaskServer({ ...app, logger: silentLogger, limits: LIFTED_LIMITS });
  const listening = await server.listen({ port: 0, host: '127.0.0.1' });
  return { url: listening.url, close: () => server.close() };
}

const serving = kind === 'bare' ? await listenBare() : kind === 'floor' ? await listenFloor() : await listenFramework();

const gc = (globalThis as { gc?: () => void }).gc;

/** Garbage collections since the last `stats` message: how many, and their pauses in ms. */
const collections = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 } };

/**
 * Bytes allocated and bytes that survived a young-generation collection into old space, since the
 * last `stats` message: the heap in use grows only by allocation and shrinks only in collections,
 * so allocation is what it grew by between them. Independent of machine load.
 *
 * The GC observer and profiler start with the first `stats` message, never in a process that only
 * answers `memory`: a running `v8.GCProfiler` keeps a record of every collection in native memory
 * until it is stopped (about 8 KB of RSS per plain call here), which the memory measure would
 * otherwise count as the server's.
 */
let profiler: v8.GCProfiler | undefined;
let usedAtStart = 0;
function instrument(): void {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      const bucket = kind === constants.NODE_PERFORMANCE_GC_MINOR ? collections.minor : collections.major;
      bucket.count++;
      bucket.ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  profiler = new v8.GCProfiler();
  profiler.start();
  usedAtStart = v8.getHeapStatistics().used_heap_size;
}

function heapFlow(): { allocated: number; promoted: number } {
  if (!profiler) {
    instrument();
    return { allocated: 0, promoted: 0 };
  }
  const { statistics } = profiler.stop();
  const usedNow = v8.getHeapStatistics().used_heap_size;
  let allocated = 0;
  let promoted = 0;
  let previous = usedAtStart;
  for (const gc of statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - previous;
    previous = gc.afterGC.heapStatistics.usedHeapSize;
    if (gc.gcType === 'Scavenge' || gc.gcType === 'MinorMarkCompact') {
      const old = (when: typeof gc.beforeGC) =>
        when.heapSpaceStatistics.find((space) => space.spaceName === 'old_space')?.spaceUsedSize ?? 0;
      promoted += old(gc.afterGC) - old(gc.beforeGC);
    }
  }
  allocated += usedNow - previous;
  profiler = new v8.GCProfiler();
  profiler.start();
  usedAtStart = v8.getHeapStatistics().used_heap_size;
  return { allocated, promoted };
}

/**
 * `TAIL_TRACE=1` (bench/tail-trace.ts): from `trace-start` on, every collection and every
 * request's arrival and finished answer on CLOCK_MONOTONIC (`process.hrtime`), and the event
 * loop's delay; `trace` sends them.
 */
const tracing = process.env.TAIL_TRACE === '1' ? startTracing() : undefined;
function startTracing() {
  // CLOCK_MONOTONIC, one clock for every process on the machine; `performance` times are offset from it.
  const wall = () => Number(process.hrtime.bigint()) / 1e6;
  const offset = wall() - performance.now();
  const state = {
    on: false,
    gcs: [] as { start: number; end: number; minor: boolean }[],
    requests: [] as { start: number; end: number; cpuMs: number }[],
    arrivals: new WeakMap<object, { at: number; cpu: NodeJS.CpuUsage }>(),
    loop: monitorEventLoopDelay({ resolution: 1 }),
    cpu: process.cpuUsage(),
  };
  new PerformanceObserver((list) => {
    if (!state.on) return;
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      const start = offset + entry.startTime;
      state.gcs.push({ start, end: start + entry.duration, minor: kind === constants.NODE_PERFORMANCE_GC_MINOR });
    }
  }).observe({ entryTypes: ['gc'] });
  // Arrival: the request's headers parsed. Answered: `res.end()` called (its bytes go to the
  // socket then; 'finish' comes only after the write's callback, later in the loop).
  diagnostics.subscribe('http.server.request.start', (message) => {
    if (state.on)
      state.arrivals.set((message as { response: object }).response, { at: wall(), cpu: process.cpuUsage() });
  });
  const end = http.ServerResponse.prototype.end;
  http.ServerResponse.prototype.end = function (this: http.ServerResponse, ...args: unknown[]) {
    const arrival = state.arrivals.get(this);
    if (arrival) {
      state.arrivals.delete(this);
      const cpu = process.cpuUsage(arrival.cpu);
      state.requests.push({ start: arrival.at, end: wall(), cpuMs: (cpu.user + cpu.system) / 1000 });
    }
    return (end as (...args: unknown[]) => http.ServerResponse).apply(this, args);
  } as typeof end;
  return {
    start() {
      state.on = true;
      state.loop.enable();
      state.cpu = process.cpuUsage();
    },
    report() {
      state.loop.disable();
      const ms = (ns: number) => ns / 1e6;
      return {
        gcs: state.gcs,
        requests: state.requests,
        loopDelay: { p50: ms(state.loop.percentile(50)), p99: ms(state.loop.percentile(99)), max: ms(state.loop.max) },
        cpu: process.cpuUsage(state.cpu),
      };
    },
  };
}

process.on('message', (message: { id: number; type: 'memory' | 'stats' | 'trace-start' | 'trace' }) => {
  if (message.type === 'trace-start' || message.type === 'trace') {
    if (message.type === 'trace-start') tracing?.start();
    process.send?.(message.type === 'trace' ? (tracing?.report() ?? {}) : {});
    return;
  }
  if (message.type === 'stats') {
    // CPU since start and the collections since the last call (the parent takes differences).
    const flow = heapFlow();
    process.send?.({ id: message.id, cpu: process.cpuUsage(), gc: structuredClone(collections), ...flow });
    for (const bucket of [collections.minor, collections.major]) {
      bucket.count = 0;
      bucket.ms = 0;
    }
    return;
  }
  // Resident memory as `ps` would show it between requests, before the forced collection (a
  // full collection itself maps memory for a moment); live heap after it.
  const rss = process.memoryUsage.rss();
  // Twice: the first collection may leave finalizers whose objects the second one frees.
  gc?.();
  gc?.();
  const resources: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) resources[name] = (resources[name] ?? 0) + 1;
  // Where the heap's committed memory sits (young generation, old space, code...), after the collection.
  const spaces = Object.fromEntries(
    v8
      .getHeapSpaceStatistics()
      .map((space) => [space.space_name, { size: space.space_size, used: space.space_used_size }]),
  );
  process.send?.({ id: message.id, memory: { ...process.memoryUsage(), rss }, resources, spaces });
});
process.once('SIGTERM', () => {
  void serving.close().then(() => process.exit(0));
});
process.stdout.write(`READY ${JSON.stringify({ url: serving.url })}\n`);
