#!/usr/bin/env node
// The `mcp-taskgen` bin. All behaviour lives in src/generator/cli.ts, where tests reach it in-process.
import { runCli } from '../src/generator/cli.js';

process.exitCode = runCli(process.argv.slice(2), {
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
