/**
 * How the Redis memory benchmarks (`memory.ts`, `sleep-memory.ts`) measure and compare: each
 * side of each round runs under a prefix of its own, and its keys are measured two ways, both
 * over this run's keys only:
 * - `MEMORY USAGE` (exact, `SAMPLES 0`) summed over every key under the prefix, divided by N,
 *   with BullMQ's events stream (capped at ~10k entries, a fixed cost per queue) shown apart;
 * - the `INFO memory` `used_memory` delta over the N tasks (includes expiry entries and
 *   allocator rounding; noisier when anything else uses the same Redis).
 * The sides alternate their order round by round, and the ratios are medians of per-round ratios.
 */
import type { Redis } from 'ioredis';
import { deleteKeysUnder, fmt, keysUnder, median, type Row, redisClient, report, uniquePrefix } from './support.js';

export interface Footprint {
  /** Bytes per task over every key, events stream excluded. */
  readonly perTask: number;
  /** The events stream, total bytes (fixed per queue). */
  readonly stream: number;
  /** `used_memory` delta per task. */
  readonly usedMemory: number;
  /** Keys left, by kind, with their count and average size. */
  readonly keys: string;
}

/** `INFO memory`'s `used_memory`: what to pass `footprint` as `before`. */
export async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/** The keys under `prefix`, measured, per task of `n`; `before` is `usedMemory` before the tasks. */
export async function footprint(client: Redis, prefix: string, n: number, before: number): Promise<Footprint> {
  const after = await usedMemory(client);
  const keys = await keysUnder(client, prefix);
  let total = 0;
  let stream = 0;
  const kinds = new Map<string, { count: number; bytes: number }>();
  for (const key of keys) {
    const bytes = Number(await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    // Name the key by its shape: a job or record id becomes `<id>`.
    const kind = key.slice(prefix.length).replace(/:([A-Za-z0-9_-]{22}|\d+)$/, ':<id>');
    const seen = kinds.get(kind) ?? { count: 0, bytes: 0 };
    kinds.set(kind, { count: seen.count + 1, bytes: seen.bytes + bytes });
    if (kind.endsWith(':events')) stream += bytes;
    else total += bytes;
  }
  // Each kind of key with its count and average size: where the bytes go.
  const shown = [...kinds].map(([kind, { count, bytes }]) => `${count}× ${kind} (${fmt(bytes / count)} B)`).join(', ');
  return { perTask: total / n, stream, usedMemory: (after - before) / n, keys: shown };
}

/** The framework, the smallest raw BullMQ job, and a raw job with the runtime's job options. */
export type FootprintSide = 'framework' | 'raw' | 'rawSameOptions';

/** One memory benchmark: how a side runs, and how its rows are named. */
export interface FootprintComparison {
  /** Tasks (or jobs) per side and round. */
  readonly n: number;
  /** Rounds; the sides' order alternates between them. */
  readonly rounds: number;
  /** Starts every prefix of the run (`mem`, `sleep-mem`). */
  readonly prefixTag: string;
  /** Runs the framework's N tasks under `prefix` and measures them with `footprint`. */
  readonly framework: (client: Redis, prefix: string) => Promise<Footprint>;
  /**
   * Runs N raw BullMQ jobs under `prefix` and measures them: `minimal` with BullMQ's default
   * options, `same-options` with the job options the runtime uses.
   */
  readonly raw: (client: Redis, prefix: string, options: 'minimal' | 'same-options') => Promise<Footprint>;
  /** The rows' `bench` column (`4 Redis memory`). */
  readonly bench: string;
  /** What one of the N is, in the printed lines (`task`, `sleeping task`). */
  readonly unit: string;
  /** The first row's metric (framework vs the smallest raw job, MEMORY USAGE). */
  readonly metric: string;
  /** The third row's metric (vs the raw job with the runtime's options). */
  readonly sameOptionsMetric: string;
  /** Every row's target ratio (`<= 2`). */
  readonly target: string;
}

/** Runs every side `rounds` times, prints each side's medians, and reports the three ratio rows. */
export async function compareFootprints(comparison: FootprintComparison): Promise<void> {
  const { n, bench, target } = comparison;
  const client = redisClient();
  const sides: readonly FootprintSide[] = ['framework', 'raw', 'rawSameOptions'];
  const run = (side: FootprintSide, prefix: string) =>
    side === 'framework'
      ? comparison.framework(client, prefix)
      : comparison.raw(client, prefix, side === 'raw' ? 'minimal' : 'same-options');
  const samples: Record<FootprintSide, Footprint[]> = { framework: [], raw: [], rawSameOptions: [] };
  try {
    for (let round = 0; round < comparison.rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const prefix = uniquePrefix(`${comparison.prefixTag}-${side}`);
        try {
          samples[side].push(await run(side, prefix));
        } finally {
          await deleteKeysUnder(prefix);
        }
      }
    }
  } finally {
    client.disconnect();
  }
  const m = (side: FootprintSide, key: 'perTask' | 'stream' | 'usedMemory') => median(samples[side].map((s) => s[key]));
  for (const side of sides) {
    console.log(
      `${side}: ${fmt(m(side, 'perTask'))} B/${comparison.unit} by MEMORY USAGE (events stream apart: ${fmt(m(side, 'stream') / 1024)} KiB), ` +
        `${fmt(m(side, 'usedMemory'))} B/task by used_memory delta; keys: ${samples[side][0]?.keys}`,
    );
  }
  const ratio = (key: 'perTask' | 'usedMemory', base: FootprintSide = 'raw') =>
    median(samples.framework.map((s, i) => s[key] / (samples[base][i] as Footprint)[key]));
  const rows: Row[] = [
    {
      bench,
      metric: comparison.metric,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('raw', 'perTask'))} B`,
      ratio: ratio('perTask'),
      target,
    },
    {
      bench,
      metric: `same, used_memory delta (N=${n})`,
      framework: `${fmt(m('framework', 'usedMemory'))} B`,
      baseline: `${fmt(m('raw', 'usedMemory'))} B`,
      ratio: ratio('usedMemory'),
      target,
    },
    {
      bench,
      metric: comparison.sameOptionsMetric,
      framework: `${fmt(m('framework', 'perTask'))} B`,
      baseline: `${fmt(m('rawSameOptions', 'perTask'))} B`,
      ratio: ratio('perTask', 'rawSameOptions'),
      target,
    },
  ];
  report(rows);
}
