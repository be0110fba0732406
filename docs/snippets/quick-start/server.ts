// #region serve
import { runTaskServer } from 'mcp-task-server';
import { taskManifest } from './__generated__/tasks.generated.js';
import { Primes } from './primes.js';

// Streamable HTTP on http://127.0.0.1:3000/mcp (`--stdio` for stdio); stops cleanly on SIGTERM.
await runTaskServer({ name: 'primes', version: '1.0.0', manifest: taskManifest, instances: [new Primes()] });
// #endregion serve
