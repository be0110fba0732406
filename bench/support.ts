/**
 * Shared helpers for the side-by-side benchmarks in this folder. Each benchmark measures the
 * framework and its alternative in the same run, interleaved, and reports ratios.
 *
 * Nothing here is part of the library or of `npm test`.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { TaskExecutor } from '../src/engine/runtime.js';
import type { TaskOutcome } from '../src/engine/task.js';

/** Only ever loopback. */
export const REDIS_URL = 'redis://127.0.0.1:6379';

/** The task every benchmark creates: the fixture's `slow_compute` with zero work. */
export const TOOL = 'slow_compute';
export const ARGS = { seconds: 0, label: 'bench' } as const;
/** What the fixture's `slow_compute` returns for `ARGS`, as a `CallToolResult`. */
export const RESULT = { content: [{ type: 'text', text: 'Computed bench in 0s' }] } as const;
/** The fixture tool's own options (`@Task({ ttlMs: 600_000, pollIntervalMs: 200 })`). */
export const TOOL_OPTIONS = { toolTtlMs: 600_000, toolPollIntervalMs: 200 } as const;
/**
 * The engine's policy in the benchmarks: the live-task quota is still checked on every create
 * (its cost is part of what is measured), but set high enough that thousands of anonymous
 * creates in a row are never refused.
 */
export const BENCH_POLICY = { maxLiveTasksPerOwner: 1_000_000_000 } as const;

/**
 * The job options the BullMQ runtime uses for every task (src/runtime/bullmq/jobs.ts), given to
 * the raw BullMQ side too, so both sides enqueue the same kind of job.
 */
export function rawJobOptions(jobId: string) {
  return {
    jobId,
    attempts: 3,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600, count: 1000 },
  } as const;
}

/** The data a raw BullMQ app would put in its job: the tool and its arguments. */
export const RAW_JOB_DATA = { tool: TOOL, args: ARGS } as const;

/** 128 random bits, like the engine's task ids, used as raw job ids. */
export function randomId(): string {
  return randomBytes(16).toString('base64url');
}

/** A fresh Redis key prefix per run, so nothing collides with other users of the server. */
export function uniquePrefix(tag: string): string {
  return `bench-${tag}-${randomBytes(4).toString('hex')}`;
}

/** A plain client for the raw BullMQ side and for inspection (what BullMQ Workers require). */
export function redisClient(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** Deletes every key under `prefix` (both `prefix:` and `prefix::`). Bounded by SCAN. */
export async function deleteKeysUnder(prefix: string): Promise<number> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return deleted;
}

/** Every key under `prefix`, by SCAN. */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** A `TaskExecutor` that does nothing and succeeds with `RESULT`. */
export const noopExecutor: TaskExecutor = {
  async execute(): Promise<TaskOutcome> {
    return { kind: 'result', result: RESULT, isError: false };
  },
};

/** Runs `fn(0..n-1)` with at most `inFlight` calls pending at once. */
export async function inPool(n: number, inFlight: number, fn: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const index = next++;
      await fn(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, lane));
}

export function now(): number {
  return performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Microseconds of this process's CPU (user + system) spent in `fn`, with its wall time. */
export async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = now();
  const value = await fn();
  const ms = now() - start;
  const used = process.cpuUsage(cpu);
  return { value, ms, cpuUs: used.user + used.system };
}

/**
 * Runs `rounds` rounds of every case, alternating the order each round (ABAB, then BABA…), so
 * drift and noise spread over both sides. Returns each case's samples.
 */
export async function interleaved<K extends string, S>(
  rounds: number,
  cases: Record<K, () => Promise<S>>,
): Promise<Record<K, S[]>> {
  const names = Object.keys(cases) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as S[]])) as unknown as Record<K, S[]>;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) samples[name].push(await cases[name]());
  }
  return samples;
}

/** The SDK's HTTP client adds an abort listener per fetch to one shared signal. */
export function quietAbortListenerWarnings(): void {
  setMaxListeners(0);
}

// ---------------------------------------------------------------------------------------------
// Reporting

/** One line of a benchmark's result: a measured ratio against the alternative. */
export interface Row {
  readonly bench: string;
  readonly metric: string;
  readonly framework: string;
  readonly baseline: string;
  /** framework / baseline, oriented so that higher is better for throughput, lower for cost. */
  readonly ratio: number;
  /** e.g. `>= 0.5` or `<= 2` (on the ratio), or any text when `met` says the verdict. */
  readonly target?: string;
  /** The verdict, for targets that are not a bound on the ratio (e.g. an absolute latency). */
  readonly met?: boolean;
}

export function verdict(row: Row): string {
  if (row.met !== undefined) return row.met ? 'met' : 'MISSED';
  if (!row.target) return '';
  const [op, value] = row.target.split(' ') as [string, string];
  const limit = Number(value);
  const met = op === '>=' ? row.ratio >= limit : row.ratio <= limit;
  return met ? 'met' : 'MISSED';
}

export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '—';
}

export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

export function printRows(rows: readonly Row[]): void {
  printTable(
    ['benchmark', 'metric', 'framework', 'baseline', 'ratio', 'target', 'verdict'],
    rows.map((row) => [
      row.bench,
      row.metric,
      row.framework,
      row.baseline,
      formatRatio(row.ratio),
      row.target ?? '',
      verdict(row),
    ]),
  );
}

/** Marks the machine-readable line `run-all.ts` collects from each benchmark's output. */
export const JSON_MARK = 'BENCH_ROWS ';

/** Prints a benchmark's ratio rows, and the line `run-all.ts` reads. */
export function report(rows: readonly Row[]): void {
  console.log('');
  printRows(rows);
  console.log(`${JSON_MARK}${JSON.stringify(rows)}`);
}

/** Runs a benchmark's main function; cleans up and exits non-zero on failure. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

/** One JSON-RPC POST's answer: HTTP status and headers, and the message (JSON, or an event stream's first `data:`). */
export interface JsonRpcPost {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly message: { result?: unknown; error?: { message: string } } | undefined;
}

/** POSTs `body` (a JSON-RPC message, or its text) to `url` on node:http through `agent`. */
export function postJsonRpc(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  agent: http.Agent,
): Promise<JsonRpcPost> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(text),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const json = response.headers['content-type']?.includes('text/event-stream')
            ? raw
                .split('\n')
                .find((line) => line.startsWith('data:'))
                ?.slice(5)
            : raw;
          let message: JsonRpcPost['message'];
          try {
            message = json ? JSON.parse(json) : undefined;
          } catch {
            return reject(new Error(`HTTP ${response.statusCode}: not JSON: ${raw.slice(0, 200)}`));
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, message });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(text);
  });
}
