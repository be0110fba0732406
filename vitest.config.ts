import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Tests run against the source, as the examples do through the `mcp-task-server-source` export condition.
    // Subpath exports first: a plain 'mcp-task-server' key would also match 'mcp-task-server/client'.
    alias: [
      {
        find: /^mcp-task-server\/client$/,
        replacement: fileURLToPath(new URL('./src/client/index.ts', import.meta.url)),
      },
      {
        find: /^mcp-task-server\/manifest$/,
        replacement: fileURLToPath(new URL('./src/manifest/index.ts', import.meta.url)),
      },
      {
        find: /^mcp-task-server\/testing$/,
        replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      },
      { find: /^mcp-task-server$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    ],
  },
  esbuild: {
    // Lower TC39 decorators: Node 20 cannot parse them.
    target: 'node20',
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'examples/**/*.test.ts'],
    // One folder per run for the packed tarballs, shared by the tests that need them.
    globalSetup: ['test/support/pack-directory.ts'],
    // Most files spend their time waiting on Redis, timers and child processes, not on the CPU:
    // two at a time on a 2-core machine halves the run (about 18 min to 8 in CI), where vitest's
    // default of cores - 1 would run them one by one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
