/**
 * Spawns `fixtures/worker-process.ts` in its own Node process and follows its JSON-line reports.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REDIS_URL } from './support.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/worker-process.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildReport {
  readonly event: string;
  readonly taskId?: string;
  readonly reason?: string;
  readonly attempt?: number;
  /** The tool version of the worker process that reported (`TOOL_VERSION`), if it has one. */
  readonly version?: string;
  readonly tool?: string;
  readonly pid?: number;
}

export class ChildWorker {
  readonly reports: ChildReport[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private stderr = '';
  private waiters: (() => void)[] = [];

  /** `script`: another worker script reporting the same JSON lines (default the scripted executor). */
  constructor(prefix: string, settings: Record<string, number | string> = {}, script = SCRIPT) {
    const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL, PREFIX: prefix };
    for (const [name, value] of Object.entries(settings)) env[name] = String(value);
    this.child = spawn(process.execPath, ['--conditions=mcp-task-server-source', '--import', 'tsx', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    this.child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.reports.push(JSON.parse(line) as ChildReport);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    void this.exited.then(() => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves with the first report matching `accept`, waiting for it if needed. */
  async waitFor(accept: (report: ChildReport) => boolean, timeoutMs = 10_000): Promise<ChildReport> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.reports.find(accept);
      if (found) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`worker process ended (${this.child.exitCode ?? this.child.signalCode}): ${this.stderr}`);
      }
      if (Date.now() > deadline) throw new Error(`no matching report in time; got ${JSON.stringify(this.reports)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  ready(): Promise<ChildReport> {
    return this.waitFor((report) => report.event === 'ready', 20_000);
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Ends the process if a test left it running. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}
