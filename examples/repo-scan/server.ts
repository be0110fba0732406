/**
 * The repository-scan example: `npm start` serves it on the embedded runtime.
 * SCAN_ROOT (default: the current directory) bounds what it may read.
 */
import path from 'node:path';
import { runTaskServer } from 'mcp-task-server';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { RepoScanner } from './src/repo-scanner.js';

await runTaskServer({
  name: 'repo-scan',
  version: '0.1.0',
  title: 'Repository scanner',
  manifest: taskManifest,
  instances: [new RepoScanner(path.resolve(process.env.SCAN_ROOT ?? process.cwd()))],
});
