/** What the server and the worker processes of the fan-out example share. */
import path from 'node:path';
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { Checksummer } from './src/checksummer.js';

export const app = {
  name: 'fan-out',
  version: '0.1.0',
  title: 'Parallel checksums',
  manifest: taskManifest,
  // CHECKSUM_ROOT (default: the current directory) bounds what it may read.
  instances: [new Checksummer(path.resolve(process.env.CHECKSUM_ROOT ?? process.cwd()))],
};
