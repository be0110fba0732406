/**
 * The MCP server: Streamable HTTP on http://127.0.0.1:3000/mcp (`PORT`, `HOST`), or stdio with `--stdio`.
 * Tasks run in this process, or on BullMQ when `REDIS_URL` is set (`WORKERS=0` leaves them to `npm run worker`).
 */
import './env.js';
import { runTaskServer } from 'mcp-task-server';
import { app } from './app.js';

await runTaskServer(app);
