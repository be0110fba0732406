/** A worker process for the issue-import example (needs `REDIS_URL`). */
import { runTaskWorkers } from 'mcp-task-server';
import { app } from './app.js';

await runTaskWorkers(app);
