/**
 * bullmq and ioredis, loaded when the BullMQ runtime first builds a connection, a queue or a
 * worker rather than when the package is imported. The root entry exports `BullmqTaskRuntime`
 * and `TaskWorker` next to `MemoryTaskRuntime`, so without this an app on the in-process runtime
 * would load (and pay start-up time and memory for) the whole Redis client stack it never uses.
 *
 * Both packages are CommonJS: `require` hands back the very module object an `import` of them
 * gets, so their classes are the same ones code importing them directly sees.
 */
import { createRequire } from 'node:module';
import type * as Bullmq from 'bullmq';
import type * as Ioredis from 'ioredis';

const load = createRequire(import.meta.url);
let bullmq: typeof Bullmq | undefined;
let ioredis: typeof Ioredis | undefined;

/** The bullmq module (`Queue`, `Job`, `Worker` and its control-flow errors), loaded on first call. */
export function bullmqLibrary(): typeof Bullmq {
  bullmq ??= load('bullmq') as typeof Bullmq;
  return bullmq;
}

/** The ioredis module (`Redis`, `Cluster`), loaded on first call. */
export function ioredisLibrary(): typeof Ioredis {
  ioredis ??= load('ioredis') as typeof Ioredis;
  return ioredis;
}

/** One of BullMQ's Lua scripts as its Redis backend loads it: the text and its key count. */
export interface BullmqScript {
  readonly content: string;
  readonly keys: number;
}

let scripts: Readonly<Record<string, BullmqScript>> | undefined;

/**
 * BullMQ's Lua scripts by name (its CommonJS build's `scripts` folder, the very text its Redis
 * backend defines as commands), for the scripts the runtime folds its record into (record-fold.ts).
 */
export function bullmqScripts(): Readonly<Record<string, BullmqScript>> {
  scripts ??= load('bullmq/dist/cjs/scripts/index.js') as Record<string, BullmqScript>;
  return scripts;
}
