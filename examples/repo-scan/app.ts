/** What the server and the worker processes of the repo-scan example share. */
import path from 'node:path';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { RepoScanner } from './src/repo-scanner.js';

export const app = {
  name: 'repo-scan',
  version: '0.1.0',
  title: 'Repository scanner',
  manifest: taskManifest,
  // SCAN_ROOT (default: the current directory) bounds what the scanner may read.
  instances: [new RepoScanner(path.resolve(process.env.SCAN_ROOT ?? process.cwd()))],
};
