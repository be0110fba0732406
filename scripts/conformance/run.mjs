#!/usr/bin/env node
/**
 * Runs the official MCP conformance CLI (`@modelcontextprotocol/conformance`, a devDependency)
 * with the Node that runs this script: `npm run conformance -- server --url ... --scenario ...`.
 *
 * The CLI imports `globSync` from `node:fs`, which Node gained in 22. On an older Node the CLI is
 * started with `fs-glob.mjs` preloaded: it registers a resolve hook that gives the CLI (and only
 * the CLI) a `node:fs` with `globSync` added. On Node 22 and later the CLI runs untouched.
 * The exit code is the CLI's.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const manifest = require.resolve('@modelcontextprotocol/conformance/package.json');
const { bin } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
const cli = path.join(path.dirname(manifest), typeof bin === 'string' ? bin : bin.conformance);

const preload = typeof fs.globSync === 'function' ? [] : ['--import', new URL('./fs-glob.mjs', import.meta.url).href];
const child = spawn(process.execPath, [...preload, cli, ...process.argv.slice(2)], { stdio: 'inherit' });

// Whoever stops this script stops the CLI, which may be serving a scenario's own HTTP server.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
