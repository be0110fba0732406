/**
 * Running `mcp-task` from source as a user would: with piped output, or inside a pseudo-terminal
 * (util-linux `script`), where keys typed into it reach the command's prompts and Ctrl-C
 * reaches it as SIGINT.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '../..');
const NODE_ARGS = ['--conditions=mcp-task-server-source', '--import', 'tsx', path.join(repoRoot, 'cli/mcp-task.ts')];

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `mcp-task args…` with stdin, stdout and stderr as pipes (no terminal). */
export function runCli(args: readonly string[], timeoutMs = 30_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
      cwd: repoRoot,
      env: { ...process.env, MCP_TASK_LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdin.end();
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-task ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface TerminalSession {
  /** Everything the terminal showed so far (ANSI sequences stripped). */
  screen(): string;
  /** Waits until the screen matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  type(keys: string): void;
  exited: Promise<number | null>;
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/** Runs `mcp-task args…` in a pseudo-terminal. */
export function runInTerminal(args: readonly string[]): TerminalSession {
  // `script` gives the terminal no size; prompts need one to lay out their lines.
  const command = `stty cols 100 rows 30; ${[process.execPath, ...NODE_ARGS, ...args].map(quote).join(' ')}`;
  const child: ChildProcessWithoutNullStreams = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    env: { ...process.env, MCP_TASK_LOG_LEVEL: 'silent', TERM: 'xterm-256color', COLUMNS: '100', LINES: '30' },
  });
  let raw = '';
  child.stdout.on('data', (chunk) => {
    raw += chunk;
  });
  child.stderr.on('data', (chunk) => {
    raw += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escape sequences
  const screen = () => raw.replace(/\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][A-Z0-9]|[78=>]|\][^\x07]*\x07)|\r/g, '');
  return {
    screen,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(screen())) {
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it shows:\n${screen()}`);
        if (child.exitCode !== null)
          throw new Error(`mcp-task exited (${child.exitCode}) before showing ${pattern}:\n${screen()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    type(keys) {
      child.stdin.write(keys);
    },
    exited: exited.finally(() => child.stdin.end()),
  };
}
