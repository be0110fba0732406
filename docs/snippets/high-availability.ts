import { BullmqTaskRuntime, createTaskServer, type RedisSentinelConnection, runTaskWorkers } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

const app = { manifest: taskManifest, instances: [new Primes()] };

// #region sentinel
const sentinel: RedisSentinelConnection = {
  sentinels: [
    { host: '10.0.0.1', port: 26379 },
    { host: '10.0.0.2', port: 26379 },
    { host: '10.0.0.3', port: 26379 },
  ],
  name: 'tasks-primary', // as in `sentinel monitor tasks-primary …`
  redisOptions: { password: process.env.REDIS_PASSWORD, sentinelPassword: process.env.SENTINEL_PASSWORD },
};
createTaskServer({ ...app, redis: { connection: sentinel }, workers: 0 });
await runTaskWorkers({ ...app, redis: { connection: sentinel } });
// #endregion sentinel

// #region cluster-replicas
const cluster = {
  // Any few nodes: the client finds the rest, masters and replicas.
  clusterNodes: ['10.0.0.1:7000', '10.0.0.2:7000', '10.0.0.3:7000'],
  clusterOptions: {
    retryDelayOnFailover: 100, // after a node's connection broke: retry this much later (ioredis default)
    retryDelayOnClusterDown: 100, // after CLUSTERDOWN, while the replica is being promoted
    redisOptions: { password: process.env.REDIS_PASSWORD },
  },
};
createTaskServer({ ...app, redis: { connection: cluster, shards: 3 }, workers: 0 });
// #endregion cluster-replicas

// #region durability
// A create is acknowledged only once a replica has the task too (one more round trip).
createTaskServer({ ...app, redis: { connection: sentinel, durability: 'replicated' } });
// The same on a runtime you build yourself, with the wait bounded below the operation deadline.
new BullmqTaskRuntime({ connection: sentinel, durability: 'replicated', replicaWaitMs: 500, operationTimeoutMs: 3000 });
// #endregion durability
