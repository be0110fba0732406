import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { deleteKeysUnder, describeWithRedis, quietLogger, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { describeRuntimeContract } from './runtime-contract.js';

describeWithRedis('bullmq runtime contract', () => {
  describeRuntimeContract('bullmq', async (executor, { concurrency }) => {
    const prefix = randomPrefix();
    const runtime = new BullmqTaskRuntime({
      connection: REDIS_URL,
      prefix,
      logger: quietLogger,
      // Methods the contract leaves waiting are aborted quickly when the test ends.
      // A short input grace, so the question cases exercise parking and replay, not waiting.
      worker: { executor, concurrency, shutdownGraceMs: 200, inputGraceMs: 50, logger: quietLogger },
    });
    await runtime.worker?.started;
    return {
      runtime,
      dispose: async () => {
        await runtime.close();
        await deleteKeysUnder(prefix);
      },
    };
  });
});
