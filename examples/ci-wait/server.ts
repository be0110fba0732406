/**
 * The ci-wait example server. Starts the stub CI on a free port unless `CI_URL` names a real
 * one, and serves on `PORT` (default 3000) with callback URLs under `MCP_TASK_PUBLIC_URL`
 * (default: this server's own address).
 */
import { runTaskServer } from 'mcp-task-server';
import { ciWaitApp } from './app.js';
import { startStubCi } from './src/stub-ci.js';

const ciUrl = process.env.CI_URL ?? (await startStubCi({ durationMs: 2000 })).url;
const port = Number(process.env.PORT ?? 3000);
await runTaskServer({
  ...ciWaitApp(ciUrl),
  publicUrl: process.env.MCP_TASK_PUBLIC_URL ?? `http://127.0.0.1:${port}`,
});
