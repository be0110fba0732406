/**
 * The BullMQ-on-Redis runtime: durable task records, work in any number of worker processes,
 * cancellation and status events across processes. No BullMQ type crosses this boundary.
 */

export {
  closeClient,
  createRedisClient,
  parseClusterNodes,
  parseSentinels,
  type RedisClient,
  type RedisClusterConnection,
  type RedisConnection,
  type RedisSentinelConnection,
  whenReady,
} from './connection.js';
export type { JobRetryOptions } from './jobs.js';
export { DEFAULT_PREFIX, DEFAULT_QUEUE, DEFAULT_SHARDS, MAX_SHARDS } from './keys.js';
export { type BullmqRuntimeOptions, BullmqTaskRuntime, type CreateDurability } from './runtime.js';
export { type Closable, type RunUntilSignalOptions, runWorkersUntilSignal } from './signals.js';
export {
  DEFAULT_SLOT_LEASE_MS,
  MIN_SLOT_LEASE_MS,
  RedisSlotLedger,
  type RedisSlotLedgerOptions,
} from './slot-ledger.js';
export { TaskWorker, type TaskWorkerOptions, type TaskWorkerSettings } from './worker.js';
