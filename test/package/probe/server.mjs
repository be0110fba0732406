// Serves the probe app on the in-process runtime, as `import 'mcp-task-server'` users do, and
// prints which packages the process loaded when a line "report" arrives on stdin.
import { createTaskServer } from 'mcp-task-server';
import { Greeter } from './dist/greeter.js';
import { loadedPackages } from './loaded-packages.mjs';

const { taskManifest } = await import('./dist/__generated__/tasks.generated.js');
const server = createTaskServer({
  name: 'probe',
  version: '1.0.0',
  manifest: taskManifest,
  instances: [new Greeter()],
});
const listening = await server.listen({ port: 0 });
process.stdout.write(`probe listening on ${listening.url} (runtime: ${server.runtime.kind})\n`);

process.stdin.setEncoding('utf8');
process.stdin.on('data', async (line) => {
  if (line.trim() !== 'report') return;
  process.stdout.write(`loaded: ${JSON.stringify(loadedPackages())}\n`);
  await listening.close();
  await server.close();
  process.exit(0);
});
