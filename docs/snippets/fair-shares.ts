import { createTaskServer } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

const app = { manifest: taskManifest, instances: [new Primes()] };

// #region fair-shares
// At most 4 of one caller's tasks run at once, across every worker process; the rest wait.
createTaskServer({ ...app, redis: 'redis://127.0.0.1:6379', limits: { maxRunningTasksPerPrincipal: 4 } });
// #endregion fair-shares
