/** What the fixture's server and worker processes share. */
import { HandWrittenTools, handWrittenManifest } from './hand-written/diagnostic-tools.js';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { FixtureTools } from './src/fixture-tools.js';
import { GeneralTools } from './src/general-tools.js';

export const app = {
  name: 'mcp-task-server-conformance-fixture',
  version: '0.1.0',
  // The generated tools, and the two whose schema or needs the generator cannot express.
  manifest: { ...taskManifest, tools: [...taskManifest.tools, ...handWrittenManifest.tools] },
  instances: [new FixtureTools(), new GeneralTools(), new HandWrittenTools()],
};
