/** Commands and long-running processes for the scaffold test: npm, the scaffolded app's scripts. */
import { type ChildProcess, spawn } from 'node:child_process';
import { expect } from 'vitest';

/**
 * The environment minus what the surrounding test run sets: a nested npm or vitest must not
 * think it runs inside this repository's scripts or tests. Registry and cache settings stay.
 */
export function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_package_|npm_lifecycle_|VITEST|TEST$|NODE_ENV$|INIT_CWD$|NODE_OPTIONS$|FORCE_COLOR$)/.test(key))
      continue;
    env[key] = value;
  }
  // Plain output, for the assertions on it.
  return { ...env, NO_COLOR: '1', ...extra };
}

export interface Finished {
  readonly output: string;
  readonly durationMs: number;
}

/** Runs a command to completion; rejects with its output when it fails or overruns. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs: number },
): Promise<Finished> {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: cleanEnvironment(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const shown = `${command} ${args.join(' ')} (in ${options.cwd})`;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${shown} did not finish in ${options.timeoutMs} ms:\n${output}`));
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${shown} could not start: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ output, durationMs: performance.now() - started });
      else reject(new Error(`${shown} failed (${signal ?? `exit code ${code}`}):\n${output}`));
    });
  });
}

export interface LongRunning {
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in output printed after `from` (an output length). */
  waitFor(pattern: RegExp, timeoutMs: number, from?: number): Promise<RegExpExecArray>;
  /** SIGTERM to its whole process group (npm, the script, its children), SIGKILL if that is not enough. */
  stop(): Promise<void>;
}

/** Starts a long-running command (a server, a worker, `npm run dev`) in a process group of its own. */
export function startCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): LongRunning {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: cleanEnvironment(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const check of waiters) check();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const shown = `${command} ${args.join(' ')}`;

  return {
    output: () => output,
    waitFor(pattern, timeoutMs, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output.slice(from));
          if (!match) return;
          done();
          resolve(match);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${shown} did not print ${pattern} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const onExit = () => {
          done();
          reject(new Error(`${shown} exited (code ${child.exitCode}) before printing ${pattern}:\n${output}`));
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off('exit', onExit);
        };
        waiters.add(check);
        child.once('exit', onExit);
        check();
        if (child.exitCode !== null && waiters.has(check)) onExit();
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      // The group may outlive its leader for a moment (tsx's child, the generator).
      killGroup(child, 'SIGKILL');
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Starts `npm start` in `cwd`, waits for the server's listening line, sends SIGTERM to npm alone
 * (as a supervisor would) and expects the server itself to get it: it says so, and stops
 * answering. npm forwards the signal to the script's shell, so this holds when the script
 * `exec`s node. Whatever happens, the whole process group is killed at the end.
 */
export async function expectNpmStartToStopOnSigterm(cwd: string, env: Record<string, string>): Promise<void> {
  const npm = spawn('npm', ['start'], {
    cwd,
    env: cleanEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /MCP task server listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    npm.once('exit', () => reject(new Error(`npm start exited before listening:\n${output}`)));
  });
  try {
    const url = await listening;
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    await expect.poll(() => output, { timeout: 10_000 }).toContain('SIGTERM received, shutting down');
    await expect
      .poll(
        () =>
          fetch(url, { method: 'POST' }).then(
            () => 'answering',
            () => 'gone',
          ),
        { timeout: 10_000, interval: 200 },
      )
      .toBe('gone');
  } finally {
    killGroup(npm, 'SIGKILL');
  }
}
