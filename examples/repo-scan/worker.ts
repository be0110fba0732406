/** A worker process for the repo-scan example: `REDIS_URL=redis://127.0.0.1:6379 npm run worker`. */
import { runTaskWorkers } from 'mcp-task-server';
import { startTracing } from '../tracing.js';
import { app } from './app.js';

await startTracing('repo-scan-worker');
await runTaskWorkers(app);
