/**
 * The runtime contract on a real three-master Redis Cluster, with the tasks spread over three
 * shards: every case above (cancel, questions, listing across pages, expiry…) holds when each
 * task's keys live on whichever master owns its shard.
 */
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { callbackTokenStored, quietLogger, randomPrefix } from '../bullmq/support.js';
import {
  clusterClient,
  describeWithClusterBinaries,
  type LocalCluster,
  startLocalCluster,
} from '../cluster/local-cluster.js';
import { describeRuntimeContract } from './runtime-contract.js';

describeWithClusterBinaries('bullmq runtime contract on Redis Cluster', () => {
  let cluster: LocalCluster;

  beforeAll(async () => {
    cluster = await startLocalCluster(3);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  describeRuntimeContract('bullmq on a 3-master cluster, 3 shards', async (executor, { concurrency }) => {
    let probe: Cluster | undefined;
    const runtime = new BullmqTaskRuntime({
      connection: cluster.connection,
      // The cluster is this file's own: a fresh prefix per case keeps cases apart, and the
      // cluster's removal removes every key.
      prefix: randomPrefix(),
      shards: 3,
      logger: quietLogger,
      worker: { executor, concurrency, shutdownGraceMs: 200, inputGraceMs: 50, logger: quietLogger },
    });
    await runtime.worker?.started;
    return {
      runtime,
      sharded: true,
      callbackTokenStored: (token) => {
        probe ??= clusterClient(cluster);
        return callbackTokenStored(runtime, token, probe);
      },
      dispose: async () => {
        probe?.disconnect();
        await runtime.close();
      },
    };
  });
});
