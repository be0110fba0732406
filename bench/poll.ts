/**
 * Benchmark: a client that polls at the interval the server suggests, against the task's own
 * duration, for tasks of 100 ms, 1 s and 10 s; with the number of `tasks/get` polls it took.
 * Compared in the same run, on the same server and at the same time, with clients that poll
 * at a fixed interval: 1 s (the server's `defaultPollIntervalMs`, what a tool that sets
 * nothing suggests) and 200 ms (the fixture's `slow_compute`).
 *
 * Each duration is its own tool (the fixture's `slow_compute` under another name), configured
 * with `pollIntervalMs: 10 000`: the longest wait its author accepts, which caps the
 * suggestion. The server learns each tool's run times from the ended tasks it is asked about;
 * a warm-up of `WARMUP` tasks per tool, polled every 100 ms, gives it its first data. Then
 * every client kind runs its tasks at once, for `ROUNDS` rounds. In process (memory runtime),
 * protocol 2026-07-28 over HTTP, one plain JSON-RPC POST per request.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/poll.ts
 */
import { taskManifest } from '../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../examples/conformance-fixture/src/general-tools.js';
import { MIN_SAMPLES } from '../src/engine/poll-advice.js';
import { createTaskServer } from '../src/host/task-server.js';
import { silentLogger } from '../src/observe/logger.js';
import type { TaskToolDefinition } from '../src/tools/definition.js';
import { fmt, median, now, percentile, type Row, report, runMain, sleep } from './support.js';

/** The three task lengths, each a tool of its own so their run times stay apart. */
const DURATIONS = [
  { tool: 'work_100ms', ms: 100, tasks: 20 },
  { tool: 'work_1s', ms: 1000, tasks: 10 },
  { tool: 'work_10s', ms: 10_000, tasks: 5 },
] as const;
const CONFIGURED_MS = 10_000;
const WARMUP = MIN_SAMPLES;
const ROUNDS = 2;
/**
 * A round's tasks start spread evenly over this window, so that what is measured is polling,
 * not a burst of a hundred creates queueing on a loaded machine.
 */
const SPREAD_MS = 2000;

type Poller = 'suggested' | 'fixed 1 s' | 'fixed 200 ms';
const FIXED: Record<Exclude<Poller, 'suggested'>, number> = { 'fixed 1 s': 1000, 'fixed 200 ms': 200 };
const POLLERS: readonly Poller[] = ['suggested', 'fixed 1 s', 'fixed 200 ms'];

const slowCompute = taskManifest.tools.find((tool) => tool.name === 'slow_compute') as TaskToolDefinition;
const manifest = {
  formatVersion: 1 as const,
  tools: [
    ...taskManifest.tools,
    ...DURATIONS.map(({ tool }) => ({ ...slowCompute, name: tool, pollIntervalMs: CONFIGURED_MS })),
  ],
};

let nextId = 1;

/** One 2026-07-28 request: its `result`. */
async function rpc(url: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const name = method === 'tools/call' ? (params.name as string) : (params.taskId as string);
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'bench-poll', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        },
      },
    }),
  });
  const reply = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (!reply.result) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** Creates a task and polls it to its end; the time from the create to the poll that saw it ended, and the polls. */
async function runOne(url: string, tool: string, ms: number, interval: (suggested: number) => number) {
  const started = now();
  let task = await rpc(url, 'tools/call', { name: tool, arguments: { seconds: ms / 1000, label: 'poll' } });
  const taskId = task.taskId as string;
  let polls = 0;
  while (!TERMINAL.has(task.status as string)) {
    await sleep(interval(task.pollIntervalMs as number));
    task = await rpc(url, 'tasks/get', { taskId });
    polls++;
  }
  if (task.status !== 'completed') throw new Error(`task ${taskId} ended ${String(task.status)}`);
  return { elapsed: now() - started, polls };
}

const intervalOf = (poller: Poller) => (suggested: number) => (poller === 'suggested' ? suggested : FIXED[poller]);

async function main(): Promise<void> {
  const server = createTaskServer({
    manifest,
    instances: [new FixtureTools(), new GeneralTools()],
    logger: silentLogger,
    workers: 500,
    // Every client here comes from one address: the creates must not be what is measured.
    limits: { createsPerSecond: 10_000, createBurst: 10_000 },
  });
  const listening = await server.listen({ port: 0, host: '127.0.0.1' });
  const url = listening.url;
  try {
    console.log(`warm-up: ${WARMUP} tasks per tool, polled every 100 ms`);
    await Promise.all(
      DURATIONS.flatMap(({ tool, ms }) => Array.from({ length: WARMUP }, () => runOne(url, tool, ms, () => 100))),
    );
    const results = new Map<string, { ratio: number[]; polls: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      console.log(`round ${round + 1} of ${ROUNDS}: every client kind at once`);
      const starts = DURATIONS.flatMap(({ tool, ms, tasks }) =>
        POLLERS.flatMap((poller) => Array.from({ length: tasks }, () => ({ tool, ms, poller }))),
      );
      await Promise.all(
        starts.map(({ tool, ms, poller }, index) =>
          (async () => {
            // Interleaved: neighbours in the list are other kinds, so every kind starts all over the window.
            await sleep(((index * 37) % starts.length) * (SPREAD_MS / starts.length));
            {
              const { elapsed, polls } = await runOne(url, tool, ms, intervalOf(poller));
              const key = `${tool}/${poller}`;
              const entry = results.get(key) ?? { ratio: [], polls: [] };
              entry.ratio.push(elapsed / ms);
              entry.polls.push(polls);
              results.set(key, entry);
            }
          })(),
        ),
      );
    }

    const rows: Row[] = [];
    const table: string[][] = [];
    const summary = (tool: string, poller: Poller) => {
      const entry = results.get(`${tool}/${poller}`) as { ratio: number[]; polls: number[] };
      const meanPolls = entry.polls.reduce((sum, polls) => sum + polls, 0) / entry.polls.length;
      return { p50: median(entry.ratio), p99: percentile(entry.ratio, 99), polls: meanPolls };
    };
    const describe = (s: ReturnType<typeof summary>) =>
      `p50 ${fmt(s.p50, 2)}× / p99 ${fmt(s.p99, 2)}× · ${fmt(s.polls, 1)} polls`;
    for (const { tool, ms } of DURATIONS) {
      for (const poller of POLLERS) {
        const s = summary(tool, poller);
        table.push([`${fmt(ms)} ms`, poller, fmt(s.p50, 2), fmt(s.p99, 2), fmt(s.polls, 1)]);
      }
      const adaptive = summary(tool, 'suggested');
      const fixed = summary(tool, 'fixed 1 s');
      const fast = summary(tool, 'fixed 200 ms');
      const length = ms < 1000 ? `${ms} ms` : `${ms / 1000} s`;
      const targeted = ms >= 1000;
      rows.push({
        bench: 'poll',
        metric: `${length} task: create → result / duration, polling at the suggestion (p99)`,
        framework: describe(adaptive),
        baseline: `fixed 1 s: ${describe(fixed)}`,
        ratio: adaptive.p99,
        ...(targeted && { target: '<= 1.3' }),
      });
      rows.push({
        bench: 'poll',
        metric: `${length} task: polls at the suggestion / polls at a fixed 200 ms`,
        framework: `${fmt(adaptive.polls, 1)} polls`,
        baseline: `fixed 200 ms: ${describe(fast)}`,
        ratio: adaptive.polls / fast.polls,
        ...(targeted && { target: '<= 0.99' }),
      });
    }
    console.log('');
    console.log('| task | poller | create → result / duration, p50 | p99 | polls (mean) |');
    console.log('|---|---|---|---|---|');
    for (const line of table) console.log(`| ${line.join(' | ')} |`);
    report(rows);
  } finally {
    await listening.close();
    await server.close();
  }
}

runMain(main);
