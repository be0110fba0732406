import type { TaskExecutor } from '../../src/engine/runtime.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import {
  callbackTokenStored,
  deleteKeysUnder,
  describeWithRedis,
  quietLogger,
  REDIS_URL,
  randomPrefix,
} from '../bullmq/support.js';
import { describeRuntimeContract, type RuntimeUnderTest } from './runtime-contract.js';

describeWithRedis('bullmq runtime contract', () => {
  describeRuntimeContract('bullmq', (executor, options) => startRuntime(executor, options, 1));
  // Shards on a single Redis (per-tenant isolation, or a cluster later): listing merges them.
  describeRuntimeContract('bullmq, 3 shards on one Redis', (executor, options) => startRuntime(executor, options, 3));
});

async function startRuntime(
  executor: TaskExecutor,
  { concurrency }: { concurrency: number },
  shards: number,
): Promise<RuntimeUnderTest> {
  const prefix = randomPrefix();
  const runtime = new BullmqTaskRuntime({
    connection: REDIS_URL,
    prefix,
    shards,
    logger: quietLogger,
    // Methods the contract leaves waiting are aborted quickly when the test ends.
    // A short input grace, so the question cases exercise parking and replay, not waiting.
    worker: { executor, concurrency, shutdownGraceMs: 200, inputGraceMs: 50, logger: quietLogger },
  });
  await runtime.worker?.started;
  return {
    runtime,
    ...(shards > 1 && { sharded: true }),
    callbackTokenStored: (token) => callbackTokenStored(runtime, token),
    dispose: async () => {
      await runtime.close();
      await deleteKeysUnder(prefix);
    },
  };
}
