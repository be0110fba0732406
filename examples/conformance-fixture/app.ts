/** What the fixture's server and worker processes share. */
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { FixtureTools } from './src/fixture-tools.js';
import { GeneralTools } from './src/general-tools.js';

export const app = {
  name: 'mcp-task-server-conformance-fixture',
  version: '0.1.0',
  manifest: taskManifest,
  instances: [new FixtureTools(), new GeneralTools()],
};
