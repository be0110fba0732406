import { runTaskServer, Task, type TaskContext } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

const app = { manifest: taskManifest, instances: [new Primes()] };

// #region server
await runTaskServer({
  ...app,
  unawareClients: {
    mode: 'auto', // 'auto' | 'handle' | 'inline'; unset: 'auto' for optional tools, required tools refuse
    graceMs: 10_000, // how long 'auto' waits; 0 to 50 000
    toolPrefix: 'task_', // the companion tools are <prefix>status, <prefix>wait, ...
    keepAliveMs: 10_000, // progress keep-alive interval, see below
  },
});
// #endregion server

export interface IndexSummary {
  files: number;
}

export class Indexer {
  // #region per-tool
  @Task({ unawareClients: 'handle' })
  async buildIndex(repo: string, ctx: TaskContext): Promise<IndexSummary> {
    ctx.progress({ message: `indexing ${repo}` });
    return { files: 0 };
  }
  // #endregion per-tool
}
