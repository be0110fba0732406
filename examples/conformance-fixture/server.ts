/** The conformance fixture: `npm run fixture` serves it for `@modelcontextprotocol/conformance`. */
import { runTaskServer } from 'mcp-task-server';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { FixtureTools } from './src/fixture-tools.js';

await runTaskServer({
  name: 'mcp-task-server-conformance-fixture',
  version: '0.1.0',
  manifest: taskManifest,
  instances: [new FixtureTools()],
});
