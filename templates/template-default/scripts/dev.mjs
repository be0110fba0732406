#!/usr/bin/env node
/**
 * `npm run dev`: runs the npm scripts named on the command line side by side (here the generator
 * in watch mode and the server, which tsx restarts on every change), each output line prefixed
 * with its script's name. Ctrl-C stops them all; when one fails, the others are stopped too.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const scripts = process.argv.slice(2);
const width = Math.max(...scripts.map((name) => name.length));
const running = new Set();
let stopping = false;
let exitCode = 0;

/** Runs `<package manager> run <name>` with the package manager that started us (npm, pnpm, yarn). */
function run(name) {
  const runner = process.env.npm_execpath;
  // Output goes through a pipe here, so the server would log JSON lines: in a terminal, ask
  // for readable ones instead (unless MCP_TASK_LOG_FORMAT says otherwise).
  const env =
    process.stdout.isTTY && !process.env.MCP_TASK_LOG_FORMAT
      ? { ...process.env, MCP_TASK_LOG_FORMAT: 'pretty' }
      : process.env;
  const options = { stdio: ['inherit', 'pipe', 'pipe'], env };
  return runner
    ? spawn(process.execPath, [runner, 'run', name], options)
    : spawn('npm', ['run', name], { ...options, shell: process.platform === 'win32' });
}

function stopAll(signal) {
  stopping = true;
  for (const child of running) child.kill(signal);
}

for (const name of scripts) {
  const label = `[${name.padEnd(width)}]`;
  const child = run(name);
  running.add(child);
  createInterface({ input: child.stdout }).on('line', (line) => process.stdout.write(`${label} ${line}\n`));
  createInterface({ input: child.stderr }).on('line', (line) => process.stderr.write(`${label} ${line}\n`));
  child.on('exit', (code, signal) => {
    running.delete(child);
    if (code !== 0 && !stopping) {
      process.stderr.write(`${label} stopped (${signal ?? `exit code ${code}`}); stopping the others\n`);
      exitCode = code ?? 1;
      stopAll('SIGTERM');
    }
    if (running.size === 0) process.exit(exitCode);
  });
}

process.on('SIGINT', () => stopAll('SIGINT'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
