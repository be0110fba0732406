#!/usr/bin/env node
// The `mcp-taskgen` bin. All behaviour lives in src/generator/cli.ts, where tests reach it in-process.
import { runCli } from '../src/generator/cli.js';

// `--watch` runs until SIGINT or SIGTERM; the watcher then closes and the process exits 0.
const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => controller.abort());

const exitCode = await runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  signal: controller.signal,
});
process.exitCode = exitCode;
