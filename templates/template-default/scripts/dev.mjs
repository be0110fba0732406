#!/usr/bin/env node
/**
 * `npm run dev`: the generator in watch mode drives everything else, so the server never runs
 * on glue older than the source.
 *
 * - Each save ends in one generator run. When it succeeds, the server restarts once (on the new
 *   glue) and a type check starts in the background; its errors are printed here.
 * - When it fails, the server is stopped (it would serve a schema that no longer matches the
 *   source) and the loop waits for the next save.
 * - A server that exits on its own (a start-up error) is reported, and restarted by the next save.
 *
 * Every line is prefixed with where it came from: [generate], [server], [typecheck], [dev].
 * Ctrl-C stops everything.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** The generator's last line of each run (see mcp-taskgen --watch): success, or anything else. */
const CYCLE_END = /^mcp-taskgen --watch: (?:wrote|unchanged:|.*Kept the last good|cannot load|refusing)/;
const CYCLE_OK = /^mcp-taskgen --watch: (?:wrote|unchanged:)/;
const LABEL_WIDTH = '[typecheck]'.length;
const isWindows = process.platform === 'win32';

let stopping = false;
/** @type {import('node:child_process').ChildProcess | undefined} */
let server;
/** @type {import('node:child_process').ChildProcess | undefined} */
let typecheck;

function print(label, line, stream = process.stdout) {
  stream.write(`${`[${label}]`.padEnd(LABEL_WIDTH)} ${line}\n`);
}

function bin(name) {
  return path.join('node_modules', '.bin', isWindows ? `${name}.cmd` : name);
}

function pipeLines(child, label, onLine) {
  createInterface({ input: child.stdout }).on('line', (line) => {
    print(label, line);
    onLine?.(line);
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    print(label, line, process.stderr);
    onLine?.(line);
  });
}

/** Stops a child and resolves once it has exited. */
function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// Output goes through a pipe here, so the server would log JSON lines: in a terminal, ask for
// readable ones instead (unless MCP_TASK_LOG_FORMAT says otherwise).
const serverEnv =
  process.stdout.isTTY && !process.env.MCP_TASK_LOG_FORMAT
    ? { ...process.env, MCP_TASK_LOG_FORMAT: 'pretty' }
    : process.env;

function startServer() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serverEnv,
  });
  pipeLines(child, 'server');
  child.on('exit', (code, signal) => {
    if (server === child) server = undefined;
    if (!stopping && signal === null)
      print('dev', `the server exited (code ${code}); fix the problem above and save to start it again`);
  });
  server = child;
}

/** Type-checks the project; a newer save cancels a check still running. */
async function startTypecheck() {
  await stop(typecheck);
  const child = spawn(bin('tsc'), ['--noEmit', '--pretty', 'false', '-p', 'tsconfig.json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: isWindows,
  });
  typecheck = child;
  let errors = 0;
  pipeLines(child, 'typecheck', (line) => {
    if (/error TS\d+/.test(line)) errors++;
  });
  child.on('exit', (code, signal) => {
    if (typecheck === child) typecheck = undefined;
    if (signal !== null || stopping) return;
    print('typecheck', code === 0 ? 'no type errors' : `${errors} type ${errors === 1 ? 'error' : 'errors'}`);
  });
}

/** One generator run has ended: serve its output, or stop serving stale glue. */
let settling = Promise.resolve();
function onGeneration(ok) {
  settling = settling.then(async () => {
    if (stopping) return;
    await stop(server);
    if (ok) {
      startServer();
      void startTypecheck();
    } else {
      print('dev', 'generation failed: the server is stopped until a save fixes the errors above');
    }
  });
}

const generator = spawn(
  bin('mcp-taskgen'),
  ['--watch', '--project', 'tsconfig.json', '--out', 'src/__generated__/tasks.generated.ts'],
  {
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: isWindows,
  },
);
pipeLines(generator, 'generate', (line) => {
  if (CYCLE_END.test(line)) onGeneration(CYCLE_OK.test(line));
});
generator.on('exit', (code, signal) => {
  if (!stopping) {
    print('dev', `the generator stopped (${signal ?? `exit code ${code}`}); stopping`, process.stderr);
    void shutdown(code ?? 1);
  }
});

async function shutdown(exitCode = 0) {
  stopping = true;
  await Promise.all([stop(server), stop(typecheck), stop(generator)]);
  process.exit(exitCode);
}

process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
