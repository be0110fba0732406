/**
 * The issue-import example server: `ISSUES_API_URL` names the tracker's API. In-process runtime
 * by default; with `REDIS_URL` on BullMQ (`WORKERS=0` leaves the work to worker.ts).
 */
import { runTaskServer } from 'mcp-task-server';
import { app } from './app.js';

await runTaskServer(app);
