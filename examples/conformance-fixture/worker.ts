/** A worker process for the fixture: `REDIS_URL=redis://127.0.0.1:6379 npm run fixture:worker`. */
import { runTaskWorkers } from 'mcp-task-server';
import { startTracing } from '../tracing.js';
import { app } from './app.js';

await startTracing('conformance-fixture-worker');
await runTaskWorkers(app);
