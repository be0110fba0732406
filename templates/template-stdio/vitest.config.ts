import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Lower TC39 decorators: Node 20 cannot run them as written.
  esbuild: { target: 'node20' },
  test: { testTimeout: 20_000 },
});
