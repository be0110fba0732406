import { createTaskServer, runTaskWorkers } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

const app = { manifest: taskManifest, instances: [new Primes()] };

// #region pieces
const server = createTaskServer({ name: 'primes', version: '1.0.0', ...app });
// server.fetch(request) answers web-standard Requests, for any host that has them.
const listening = await server.listen({ port: 3000 });
console.log(`serving ${listening.url}`);
// ... later
await server.close();
// #endregion pieces

// #region limits
createTaskServer({ ...app, limits: { maxBodyBytes: 8 * 1024 * 1024 } });
// #endregion limits

// #region redis
createTaskServer({ ...app, redis: 'redis://127.0.0.1:6379', workers: 0 }); // answers clients only
await runTaskWorkers(app); // runs the tasks; REDIS_URL names the Redis
// #endregion redis

// #region cluster
const cluster = { clusterNodes: ['10.0.0.1:7000', '10.0.0.2:7000', '10.0.0.3:7000'] };
createTaskServer({ ...app, redis: { connection: cluster, shards: 3 }, workers: 0 });
await runTaskWorkers({ ...app, redis: { connection: cluster, shards: 3, worker: { consumeShards: [0, 2] } } });
// #endregion cluster
