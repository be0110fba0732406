/**
 * The conformance fixture: `npm run fixture` serves it for `@modelcontextprotocol/conformance`.
 * With `FIXTURE_TOKENS` set to a JSON table (`{"<token>": {"sub": "alice", "clientId": "c1"}}`)
 * it requires bearer auth, each token verified against that table.
 */
import { parseTokenTable, runTaskServer, tokenTableVerifier } from 'mcp-task-server';
import { startTracing } from '../tracing.js';
import { app } from './app.js';

await startTracing('conformance-fixture-server');
const tokens = process.env.FIXTURE_TOKENS;
await runTaskServer({
  ...app,
  ...(tokens && { http: { auth: { verifier: tokenTableVerifier(parseTokenTable(tokens, 'FIXTURE_TOKENS')) } } }),
});
