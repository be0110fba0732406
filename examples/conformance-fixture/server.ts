/** The conformance fixture: `npm run fixture` serves it for `@modelcontextprotocol/conformance`. */
import { runTaskServer } from 'mcp-task-server';
import { app } from './app.js';

await runTaskServer(app);
