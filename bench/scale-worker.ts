/**
 * A worker process of `bench/scale.ts`: a `TaskWorker` with a no-op executor for every queue of
 * the setups, each consuming all of its setup's shards (the default) or, for a setup with one
 * worker process per shard, the shard of this process's index. Every setup is served by the
 * same processes, so only the shards and their layout differ. Idle workers only wait on Redis.
 */

import { silentLogger } from '../src/observe/logger.js';
import { TaskWorker } from '../src/runtime/bullmq/index.js';
import { childArgs, cpuReply, serveParent } from './scale-setups.js';
import { noopExecutor } from './support.js';

const { setups, concurrency, index = 0 } = childArgs();
const byQueue = new Map(setups.map((setup) => [setup.queue, setup]));
const workers = [...byQueue.values()].map(
  (setup) =>
    new TaskWorker({
      executor: noopExecutor,
      concurrency,
      connection: setup.connection,
      prefix: setup.prefix,
      queue: setup.queue,
      shards: setup.shards,
      ...(setup.workerPerShard && { consumeShards: [index % setup.shards] }),
      logger: silentLogger,
    }),
);

serveParent(async (request) => {
  switch (request.type) {
    case 'cpu':
      return cpuReply();
    case 'run':
      throw new Error('a worker process does not create tasks');
    case 'stop':
      await Promise.all(workers.map((worker) => worker.close()));
      process.exit(0);
  }
});

await Promise.all(workers.map((worker) => worker.started));
process.send?.({ type: 'ready' });
