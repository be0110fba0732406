/**
 * A local MCP server over stdio: a desktop client (Claude Desktop, VS Code, Cursor...) starts it
 * as `node dist/server.js` and talks to it on stdin/stdout. Logs go to stderr.
 */
import { runTaskServer } from 'mcp-task-server';
import { taskManifest } from './__generated__/tasks.generated.js';
import { LineCounter } from './line-counter.js';

await runTaskServer({
  name: 'my-task-server',
  version: '0.1.0',
  manifest: taskManifest,
  instances: [new LineCounter()],
  argv: ['--stdio'],
});
