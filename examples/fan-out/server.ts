/**
 * The fan-out example server. In-process runtime by default; with `REDIS_URL` on BullMQ
 * (`WORKERS=0` leaves the work to worker.ts).
 */
import { runTaskServer } from 'mcp-task-server';
import { app } from './app.js';

await runTaskServer(app);
