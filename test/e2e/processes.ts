/** Example server and worker processes, started the way `npm start` / `npm run worker` start them. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface AppProcess {
  readonly child: ChildProcess;
  /** The URL a server printed (servers only). */
  readonly url: string | undefined;
  /** Everything it wrote, for failure messages. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `examples/<example>/<entry>.ts` and resolves once it prints its ready line
 * (`MCP task server listening on …` or `MCP task worker running …`).
 */
export function startAppProcess(
  example: string,
  entry: 'server' | 'worker',
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<AppProcess> {
  const child = spawn(
    process.execPath,
    ['--conditions=mcp-task-server-source', '--import', 'tsx', `examples/${example}/${entry}.ts`],
    {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', MCP_TASK_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${example}/${entry} did not start in ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    // Everything is kept, also after the ready line: tests read the lines a process logs.
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const onData = () => {
      const ready = /MCP task server listening on (\S+)|MCP task worker running/.exec(output);
      if (!ready) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolve({
        child,
        url: ready[1],
        output: () => output,
        stop: async (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${example}/${entry} exited with ${code} before it was ready:\n${output}`));
    });
  });
}
