/** The conformance fixture: `npm run fixture` serves it for `@modelcontextprotocol/conformance`. */
import { runTaskServer } from 'mcp-task-server';
import { startTracing } from '../tracing.js';
import { app } from './app.js';

await startTracing('conformance-fixture-server');
await runTaskServer(app);
