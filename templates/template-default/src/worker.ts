/** A worker process: runs tasks from the BullMQ queue in Redis (`REDIS_URL`). Start as many as you like. */
import './env.js';
import { runTaskWorkers } from 'mcp-task-server';
import { app } from './app.js';

await runTaskWorkers(app);
