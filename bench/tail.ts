/**
 * Benchmark 6: tail latency of a plain `tools/call`, and the server's resident memory, on built
 * output. The servers run as `node dist/bench/tail-server.js` (compiled here first with
 * bench/tsconfig.dist.json), one server per process, so neither pays for the other's garbage and
 * each process's memory is its own.
 *
 * - Latency: one client, one call at a time (what an agent's tool call looks like), over
 *   Streamable HTTP, on both protocol revisions: 2026-07-28 (stateless POSTs, JSON answers)
 *   and 2025-11-25 (one session, answers on SSE streams). The framework's inline `greet` (a `@Tool`) against the
 *   same tool on a bare SDK server, in interleaved rounds; p50, p99 and p99.9 over every call of
 *   every round. Target: the framework's p99 at most 2 ms and at most 3× its own p50.
 * - Memory: fresh processes started with --expose-gc, on each revision (2026-07-28 stateless
 *   POSTs; one 2025-11-25 session). RSS (read between requests, before a forced GC) and live
 *   heap (after it) at start, after warm-up calls, right after `RETAINED` task creations on the
 *   in-process runtime (each task completes at once and is retained for its TTL), and again
 *   `SETTLE_MS` later with the server idle; against the bare SDK server after as many plain
 *   calls. Target: RSS after the tasks at most 1.3× RSS at start.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/tail.ts [latency] [memory]
 *   TAIL_SERVER_FLAGS=--max-semi-space-size=64 node ... bench/tail.ts latency   # try a V8 setting
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  ARGS,
  fmt,
  type JsonRpcPost,
  now,
  percentile,
  postJsonRpc,
  printTable,
  type Row,
  report,
  runMain,
  TOOL,
} from './support.js';

const ROUNDS = 4;
const CALLS_PER_ROUND = 1000;
const WARMUP_CALLS = 1000;
const RETAINED = 2000;
/**
 * How long a server sits idle after the load before its settled RSS is read. V8's memory reducer
 * shrinks the young generation and returns free pages a few seconds after allocation stops
 * (measured on an idle machine: most of it within 10 s, all of it within 20 s; later under load).
 */
const SETTLE_MS = 30_000;
const SETTLE_STEP_MS = 15_000;
const SETTLE_MAX_MS = 120_000;
/** How long the servers had been idle at their settled reading, for the printout. */
let settleSeconds = 0;
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const MIB = 1024 * 1024;
/** Extra node flags for both servers, to try a setting (e.g. `--max-semi-space-size=64`). */
const SERVER_FLAGS = (process.env.TAIL_SERVER_FLAGS ?? '').split(' ').filter(Boolean);

const root = fileURLToPath(new URL('..', import.meta.url));

// ---------------------------------------------------------------------------------------------
// The servers

interface Collections {
  readonly minor: { count: number; ms: number };
  readonly major: { count: number; ms: number };
}

interface ServerStats {
  /** CPU since the process started. */
  readonly cpu: NodeJS.CpuUsage;
  /** Collections since the previous `stats()`. */
  readonly gc: Collections;
  /** Bytes allocated, and bytes that survived a young collection into old space, since then. */
  readonly allocated: number;
  readonly promoted: number;
}

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  memory(): Promise<Memory>;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

function compile(): void {
  const tsc = `${root}node_modules/.bin/tsc`;
  execFileSync(tsc, ['-p', `${root}bench/tsconfig.dist.json`], { stdio: 'inherit' });
}

/** A server from built output; `throughTsx` runs the TypeScript source through tsx instead. */
async function startServer(kind: 'bare' | 'framework', throughTsx = false): Promise<Served> {
  const entry = throughTsx
    ? ['--conditions=mcp-task-server-source', '--import', 'tsx', `${root}bench/tail-server.ts`]
    : [`${root}dist/bench/tail-server.js`];
  const child = spawn(process.execPath, ['--expose-gc', ...SERVER_FLAGS, ...entry, kind], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${kind} server did not start within 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`the ${kind} server exited with ${code}`)));
    lines.on('line', (line) => {
      if (!line.startsWith('READY ')) return;
      clearTimeout(timer);
      resolve((JSON.parse(line.slice(6)) as { url: string }).url);
    });
  });
  let nextId = 0;
  const ask = <T>(type: 'memory' | 'stats') =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      const onMessage = (message: { id: number } & T) => {
        if (message.id !== id) return;
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
      child.send({ id, type });
    });
  return {
    child,
    url,
    memory: async () => {
      const { memory, spaces } = await ask<{ memory: NodeJS.MemoryUsage; spaces: Record<string, { size: number }> }>(
        'memory',
      );
      return { ...memory, newSpace: spaces.new_space?.size ?? 0 };
    },
    stats: () => ask<ServerStats>('stats'),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A minimal client on node:http: raw JSON-RPC POSTs, one keep-alive socket

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let nextRequestId = 1;

type Revision = '2026-07-28' | '2025-11-25';

type Post = JsonRpcPost;

function post(url: string, body: unknown, headers: Record<string, string>): Promise<Post> {
  return postJsonRpc(url, body, headers, agent);
}

/** Calls one method; throws on an HTTP or JSON-RPC error. */
type Call = (method: string, params: Record<string, unknown>, name: string) => Promise<unknown>;

async function connect(url: string, revision: Revision): Promise<Call> {
  const check = (reply: Post): unknown => {
    if (reply.status !== 200 && reply.status !== 202) throw new Error(`HTTP ${reply.status}`);
    if (reply.message?.error) throw new Error(reply.message.error.message);
    return reply.message?.result;
  };
  if (revision === '2026-07-28') {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': revision,
      'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-server-bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
    };
    return async (method, params, name) =>
      check(
        await post(
          url,
          { jsonrpc: '2.0', id: nextRequestId++, method, params: { ...params, _meta: meta } },
          { 'mcp-protocol-version': revision, 'mcp-method': method, 'mcp-name': name },
        ),
      );
  }
  const initialized = await post(
    url,
    {
      jsonrpc: '2.0',
      id: nextRequestId++,
      method: 'initialize',
      params: {
        protocolVersion: revision,
        capabilities: { tasks: {} },
        clientInfo: { name: 'mcp-task-server-bench', version: '1.0.0' },
      },
    },
    {},
  );
  check(initialized);
  const session = initialized.headers['mcp-session-id'];
  if (typeof session !== 'string') throw new Error('no Mcp-Session-Id on initialize');
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': revision };
  check(await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers));
  return async (method, params) =>
    check(await post(url, { jsonrpc: '2.0', id: nextRequestId++, method, params }, headers));
}

const greet = (call: Call) => () => call('tools/call', { name: 'greet', arguments: { name: 'bench' } }, 'greet');

async function timed(n: number, op: () => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = now();
    await op();
    latencies.push(now() - start);
  }
  return latencies;
}

// ---------------------------------------------------------------------------------------------

interface Tail {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
}

function tail(samples: readonly number[]): Tail {
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), p999: percentile(samples, 99.9) };
}

interface Case {
  readonly name: string;
  readonly revision: Revision;
  readonly side: 'framework' | 'bare';
  readonly served: Served;
  readonly op: () => Promise<unknown>;
}

/** What a case cost its server over all its rounds: CPU and garbage collection. */
interface Cost {
  calls: number;
  cpuUs: number;
  minor: number;
  major: number;
  gcMs: number;
  allocated: number;
  promoted: number;
}

/** Runs `n` calls of a case, timing each, and adds its server's CPU and collections to `cost`. */
async function round(one: Case, n: number, cost: Cost): Promise<number[]> {
  const before = await one.served.stats();
  const latencies = await timed(n, one.op);
  const after = await one.served.stats();
  cost.calls += n;
  cost.cpuUs += after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  cost.minor += after.gc.minor.count;
  cost.major += after.gc.major.count;
  cost.gcMs += after.gc.minor.ms + after.gc.major.ms;
  cost.allocated += after.allocated;
  cost.promoted += after.promoted;
  return latencies;
}

async function measureLatency(): Promise<Row[]> {
  const bare = await startServer('bare');
  const framework = await startServer('framework');
  const revisions: Revision[] = ['2026-07-28', '2025-11-25'];
  const cases: Case[] = [];
  try {
    for (const revision of revisions) {
      for (const [side, served] of [
        ['framework', framework],
        ['bare', bare],
      ] as const) {
        const op = greet(await connect(served.url, revision));
        const answer = (await op()) as { content?: unknown };
        if (!Array.isArray(answer.content))
          throw new Error(`${side} ${revision}: unexpected ${JSON.stringify(answer)}`);
        cases.push({ name: `${side} ${revision}`, revision, side, served, op });
      }
    }
    for (const one of cases) await timed(WARMUP_CALLS, one.op);
    const samples = new Map(cases.map((one) => [one.name, [] as number[]]));
    const costs = new Map(
      cases.map((one) => [one.name, { calls: 0, cpuUs: 0, minor: 0, major: 0, gcMs: 0, allocated: 0, promoted: 0 }]),
    );
    for (let r = 0; r < ROUNDS; r++) {
      // Rotate the order each round so no case always runs first or last.
      for (let i = 0; i < cases.length; i++) {
        const one = cases[(i + r) % cases.length] as Case;
        samples.get(one.name)?.push(...(await round(one, CALLS_PER_ROUND, costs.get(one.name) as Cost)));
      }
    }
    const stats = new Map([...samples].map(([name, latencies]) => [name, tail(latencies)]));
    console.log(
      `plain tools/call, one client, one call at a time, ${ROUNDS} rounds × ${CALLS_PER_ROUND} calls; ` +
        'latency in ms; server CPU and heap per call, collections per 1,000 calls',
    );
    printTable(
      [
        'server',
        'protocol',
        'p50',
        'p99',
        'p99.9',
        'p99 ÷ p50',
        'CPU µs/call',
        'KB allocated/call',
        'KB to old space/call',
        'minor GCs',
        'major GCs',
        'GC ms',
      ],
      cases.map((one) => {
        const s = stats.get(one.name) as Tail;
        const c = costs.get(one.name) as Cost;
        const per1000 = (value: number) => fmt((value / c.calls) * 1000, 1);
        return [
          one.side,
          one.revision,
          fmt(s.p50, 2),
          fmt(s.p99, 2),
          fmt(s.p999, 2),
          `${fmt(s.p99 / s.p50, 2)}×`,
          fmt(c.cpuUs / c.calls),
          fmt(c.allocated / c.calls / 1024, 1),
          fmt(c.promoted / c.calls / 1024, 1),
          per1000(c.minor),
          per1000(c.major),
          per1000(c.gcMs),
        ];
      }),
    );
    const tailRows = revisions.map((revision): Row => {
      const mine = stats.get(`framework ${revision}`) as Tail;
      const theirs = stats.get(`bare ${revision}`) as Tail;
      const show = (s: Tail) => `p99 ${fmt(s.p99, 2)} ms (p50 ${fmt(s.p50, 2)}, ${fmt(s.p99 / s.p50, 2)}×)`;
      return {
        bench: '6 tail',
        metric: `plain tools/call p99, ${revision}, 1 client; ratio = p99 vs bare SDK p99`,
        framework: show(mine),
        baseline: show(theirs),
        ratio: mine.p99 / theirs.p99,
        target: 'p99 <= 2 ms and <= 3× own p50',
        met: mine.p99 <= 2 && mine.p99 <= 3 * mine.p50,
      };
    });
    // What sets the tail, independent of the machine's load: garbage per call, and how much of
    // it outlives young collections (copied, then left for a full mark-compact).
    const garbageRows = revisions.map((revision): Row => {
      const mine = costs.get(`framework ${revision}`) as Cost;
      const theirs = costs.get(`bare ${revision}`) as Cost;
      const show = (c: Cost) =>
        `${fmt(c.allocated / c.calls / 1024, 1)} KB (${fmt(c.promoted / c.calls / 1024, 1)} KB to old space)`;
      return {
        bench: '6 tail',
        metric: `plain tools/call, ${revision}: heap allocated per call (surviving young GC); lower is better`,
        framework: show(mine),
        baseline: show(theirs),
        ratio: mine.allocated / mine.calls / (theirs.allocated / theirs.calls),
      };
    });
    return [...tailRows, ...garbageRows];
  } finally {
    await Promise.all([bare.stop(), framework.stop()]);
  }
}

// ---------------------------------------------------------------------------------------------

interface Footprint {
  readonly start: Memory;
  readonly warm: Memory;
  readonly loaded: Memory;
  /** At least `SETTLE_MS` after the load ended, the server idle: what V8 keeps once it gives back what it can. */
  readonly settled: Memory;
}

/** What a server reports of its memory: `process.memoryUsage()` and V8's young generation. */
interface Memory extends NodeJS.MemoryUsage {
  /** Committed size of V8's young generation (both semi-spaces), after the forced collection. */
  readonly newSpace: number;
}

/**
 * Memory at start, after warm-up calls, and after `RETAINED` more calls of `load`, over one
 * revision: 2026-07-28 stateless POSTs, or one 2025-11-25 session. The server is left running,
 * idle, to be read again (`read`) and stopped (`stop`).
 */
async function footprint(
  kind: 'bare' | 'framework',
  revision: Revision,
  load: (call: Call, i: number) => Promise<unknown>,
): Promise<{ measured: Omit<Footprint, 'settled'>; read: () => Promise<Memory>; stop: () => Promise<void> }> {
  const served = await startServer(kind);
  try {
    const start = await served.memory();
    const call = await connect(served.url, revision);
    await timed(WARMUP_CALLS, greet(call));
    const warm = await served.memory();
    for (let i = 0; i < RETAINED; i++) await load(call, i);
    const loaded = await served.memory();
    return { measured: { start, warm, loaded }, read: () => served.memory(), stop: () => served.stop() };
  } catch (error) {
    await served.stop();
    throw error;
  }
}

/** Creates one task of the fixture's tool (completing at once, retained for its TTL). */
function createTask(revision: Revision) {
  return async (call: Call, i: number) => {
    const created = (await call(
      'tools/call',
      {
        name: TOOL,
        arguments: { ...ARGS, label: `bench-${i}` },
        // 2025-11-25 asks for a task in the call; 2026-07-28 gets one from the declared extension.
        ...(revision === '2025-11-25' && { task: { ttl: 600_000 } }),
      },
      TOOL,
    )) as { taskId?: string; task?: { taskId?: string } };
    if (typeof (created.taskId ?? created.task?.taskId) !== 'string')
      throw new Error(`no task created: ${JSON.stringify(created)}`);
  };
}

/** RSS of a server that has just started, serving nothing yet. */
async function rssAtStart(kind: 'bare' | 'framework', throughTsx: boolean): Promise<number> {
  const served = await startServer(kind, throughTsx);
  try {
    return (await served.memory()).rss;
  } finally {
    await served.stop();
  }
}

async function measureMemory(): Promise<Row[]> {
  const revisions: Revision[] = ['2026-07-28', '2025-11-25'];
  // All four servers stay up after their load and are read again together once idle: after
  // SETTLE_MS, then every SETTLE_STEP_MS while one is still above the target, up to SETTLE_MAX_MS
  // (how soon V8 gives memory back depends on the machine's load; the time it took is shown).
  const loaded: { revision: Revision; side: 'framework' | 'bare'; run: Awaited<ReturnType<typeof footprint>> }[] = [];
  try {
    for (const revision of revisions) {
      loaded.push({ revision, side: 'bare', run: await footprint('bare', revision, (call) => greet(call)()) });
      loaded.push({ revision, side: 'framework', run: await footprint('framework', revision, createTask(revision)) });
    }
  } catch (error) {
    await Promise.allSettled(loaded.map(({ run }) => run.stop()));
    throw error;
  }
  const idleFrom = now();
  let idle: Memory[] = [];
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    for (;;) {
      idle = await Promise.all(loaded.map(({ run }) => run.read()));
      const above = idle.some(
        (memory, i) => memory.rss > 1.3 * (loaded[i] as (typeof loaded)[number]).run.measured.start.rss,
      );
      if (!above || now() - idleFrom >= SETTLE_MAX_MS) break;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_STEP_MS));
    }
  } finally {
    await Promise.allSettled(loaded.map(({ run }) => run.stop()));
  }
  settleSeconds = (now() - idleFrom) / 1000;
  const settled = loaded.map(({ run }, i) => ({ ...run.measured, settled: idle[i] as Memory }) satisfies Footprint);
  const of = (revision: Revision, side: 'framework' | 'bare') =>
    settled[loaded.findIndex((one) => one.revision === revision && one.side === side)] as Footprint;
  const runs = revisions.map((revision) => ({
    revision,
    framework: of(revision, 'framework'),
    bare: of(revision, 'bare'),
  }));
  const mib = (bytes: number) => `${fmt(bytes / MIB, 1)} MiB`;
  console.log(
    `\nserver memory (MiB; RSS between requests, heap and young generation after a forced GC); warm = after ${fmt(WARMUP_CALLS)} plain calls, ` +
      `loaded = then ${fmt(RETAINED)} task creations (framework) or plain calls (bare), settled = idle for ${fmt(settleSeconds)} s after the last load`,
  );
  printTable(
    [
      'server',
      'protocol',
      'RSS start',
      'RSS warm',
      'RSS loaded',
      'loaded ÷ start',
      'RSS settled',
      'settled ÷ start',
      'heap start',
      'heap warm',
      'heap loaded',
      'heap committed loaded',
      'young gen loaded',
    ],
    runs.flatMap(({ revision, framework, bare }) =>
      (
        [
          ['framework', framework],
          ['bare', bare],
        ] as const
      ).map(([name, f]) => [
        name,
        revision,
        fmt(f.start.rss / MIB, 1),
        fmt(f.warm.rss / MIB, 1),
        fmt(f.loaded.rss / MIB, 1),
        `${fmt(f.loaded.rss / f.start.rss, 2)}×`,
        fmt(f.settled.rss / MIB, 1),
        `${fmt(f.settled.rss / f.start.rss, 2)}×`,
        fmt(f.start.heapUsed / MIB, 1),
        fmt(f.warm.heapUsed / MIB, 1),
        fmt(f.loaded.heapUsed / MIB, 1),
        fmt(f.loaded.heapTotal / MIB, 1),
        fmt(f.loaded.newSpace / MIB, 1),
      ]),
    ),
  );
  const rows: Row[] = [];
  for (const { revision, framework, bare } of runs) {
    const heapPerTask = (framework.loaded.heapUsed - framework.warm.heapUsed) / RETAINED;
    const rssPerTask = (framework.loaded.rss - framework.warm.rss) / RETAINED;
    console.log(`${revision}: per retained task ${fmt(heapPerTask)} B of live heap, ${fmt(rssPerTask)} B of RSS`);
    rows.push(
      {
        bench: '6 memory',
        metric: `server RSS holding ${fmt(RETAINED)} completed tasks ÷ RSS at start, ${revision} (bare: after as many plain calls)`,
        framework: `${mib(framework.loaded.rss)} from ${mib(framework.start.rss)} (${fmt(framework.loaded.rss / framework.start.rss, 2)}×)`,
        baseline: `${mib(bare.loaded.rss)} from ${mib(bare.start.rss)} (${fmt(bare.loaded.rss / bare.start.rss, 2)}×)`,
        ratio: framework.loaded.rss / bare.loaded.rss,
        target: 'loaded <= 1.3× start',
        met: framework.loaded.rss <= 1.3 * framework.start.rss,
      },
      {
        bench: '6 memory',
        metric: `server RSS idle ${fmt(settleSeconds)} s after that load, ÷ RSS at start, ${revision} (bare: the same)`,
        framework: `${mib(framework.settled.rss)} (${fmt(framework.settled.rss / framework.start.rss, 2)}×, heap ${mib(framework.settled.heapUsed)})`,
        baseline: `${mib(bare.settled.rss)} (${fmt(bare.settled.rss / bare.start.rss, 2)}×, heap ${mib(bare.settled.heapUsed)})`,
        ratio: framework.settled.rss / bare.settled.rss,
        target: 'settled <= 1.3× start',
        met: framework.settled.rss <= 1.3 * framework.start.rss,
      },
      {
        bench: '6 memory',
        metric: `live heap per retained completed task, in-process runtime, ${revision} (RSS per task in brackets)`,
        framework: `${fmt(heapPerTask)} B (${fmt(rssPerTask)} B)`,
        baseline: '—',
        ratio: Number.NaN,
      },
    );
  }
  const first = runs[0] as (typeof runs)[number];
  // What the source loader costs: the same server run the way `npm start` runs the examples.
  const throughTsx = await rssAtStart('framework', true);
  console.log(`framework server at start through tsx (TypeScript source): ${mib(throughTsx)} RSS`);
  return [
    {
      bench: '6 memory',
      metric: 'server RSS at start, through tsx vs built output (the source loader); lower is better',
      framework: mib(throughTsx),
      baseline: `${mib(first.framework.start.rss)} built`,
      ratio: throughTsx / first.framework.start.rss,
    },
    {
      bench: '6 memory',
      metric: 'server RSS at start (built output); ratio lower is better',
      framework: mib(first.framework.start.rss),
      baseline: `${mib(first.bare.start.rss)} bare SDK`,
      ratio: first.framework.start.rss / first.bare.start.rss,
    },
    ...rows,
  ];
}

async function main(): Promise<void> {
  console.log('compiling the framework and dist/bench/tail-server.js (bench/tsconfig.dist.json)');
  compile();
  const parts = process.argv.slice(2);
  const rows = [
    ...(parts.length === 0 || parts.includes('latency') ? await measureLatency() : []),
    ...(parts.length === 0 || parts.includes('memory') ? await measureMemory() : []),
  ];
  agent.destroy();
  report(rows);
}

runMain(main);
