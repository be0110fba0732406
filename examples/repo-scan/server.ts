/**
 * The repo-scan example server. `npm start` serves it on the in-process runtime; with
 * `REDIS_URL` set it runs on BullMQ, and `WORKERS=0` leaves the work to `npm run worker`.
 */
import { runTaskServer } from 'mcp-task-server';
import { startTracing } from '../tracing.js';
import { app } from './app.js';

await startTracing('repo-scan-server');
await runTaskServer(app);
