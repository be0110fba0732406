/** What the server and the worker processes share: the generated manifest and the instances it calls. */
import { taskManifest } from './__generated__/tasks.generated.js';
import { PrimeCounter } from './prime-counter.js';

export const app = {
  name: 'my-task-server',
  version: '0.1.0',
  manifest: taskManifest,
  instances: [new PrimeCounter()],
};
