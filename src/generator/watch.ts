/**
 * `mcp-taskgen --watch`: one long-lived `ProjectSession`, refreshed file by file.
 *
 * - Changes are debounced (an editor's save is often several writes) and batched.
 * - The generated files themselves (the module and the typed client), `node_modules` and anything
 *   that is not TypeScript are ignored, so writing the output never triggers another run.
 * - When the source has errors, the last good output stays on disk and the errors are printed.
 * - A changed tsconfig.json starts a new session: it can change every file's meaning.
 */
import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';
import { hasErrors } from './diagnostics.js';
import { emitClientModule } from './emit/client.js';
import { EmitCache } from './emit/emit-cache.js';
import { emitTaskModule } from './emit/module.js';
import { writeGenerated } from './files.js';
import { diagnosticCount, formatDiagnostics } from './format-diagnostics.js';
import { ProjectSession } from './reader/read-project.js';

export interface WatchOptions {
  /** Absolute path of the project's tsconfig.json. */
  readonly tsconfig: string;
  /** Absolute path of the module to generate. */
  readonly out: string;
  /** Absolute path of the typed client to generate along with it (`--client`); default: none. */
  readonly client?: string;
  readonly include?: (file: string) => boolean;
  /** Quiet period after the last change before regenerating. Default 30 ms. */
  readonly debounceMs?: number;
  /** Paths in messages are relative to this directory. */
  readonly cwd: string;
  readonly log: (text: string) => void;
  /** Called after every run, first the initial one; for tests and benchmarks. */
  readonly onCycle?: (cycle: WatchCycle) => void;
}

export interface WatchCycle {
  readonly outcome: 'written' | 'unchanged' | 'errors' | 'refused';
  /** From the first change of the batch (or the start) to the end of the run. */
  readonly durationMs: number;
  readonly changed: readonly string[];
}

export interface WatchHandle {
  /** Stops watching; resolves once no run is in progress. */
  stop(): Promise<void>;
}

const SOURCE_FILE = /\.(?:[cm]?tsx?)$/;

export function watchProject(options: WatchOptions): WatchHandle {
  const projectDir = path.dirname(options.tsconfig);
  const debounceMs = options.debounceMs ?? 30;
  const outputs = new Set(options.client ? [options.out, options.client] : [options.out]);
  const openSession = () =>
    ProjectSession.open({
      tsconfig: options.tsconfig,
      exclude: [...outputs],
      ...(options.include ? { include: options.include } : {}),
    });
  let session = openSession();
  // Each tool's and named schema's code, reused while its IR and every type it reads are unchanged.
  const emitCache = new EmitCache();
  let pending = new Set<string>();
  let firstChangeAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const display = (file: string) => path.relative(options.cwd, file).split(path.sep).join('/') || '.';

  const run = (changed: readonly string[], startedAt: number): void => {
    if (changed.includes(options.tsconfig) || !(session instanceof ProjectSession)) session = openSession();
    else session.refresh(changed);
    const finish = (outcome: WatchCycle['outcome'], message: string) => {
      const durationMs = performance.now() - startedAt;
      options.log(`${message} (${Math.round(durationMs)} ms)\n`);
      options.onCycle?.({ outcome, durationMs, changed });
    };
    if (!(session instanceof ProjectSession)) {
      options.log(formatDiagnostics([session], { cwd: options.cwd }));
      finish('errors', 'mcp-taskgen --watch: cannot load the project; waiting for changes');
      return;
    }
    const { ir, diagnostics } = session.read();
    if (diagnostics.length > 0) options.log(formatDiagnostics(diagnostics, { cwd: options.cwd }));
    if (hasErrors(diagnostics)) {
      finish(
        'errors',
        `mcp-taskgen --watch: ${diagnosticCount(diagnostics)} Kept the last good ${display(options.out)}`,
      );
      return;
    }
    const files = new Map([[options.out, emitTaskModule(ir, { projectDir, outFile: options.out, cache: emitCache })]]);
    if (options.client) files.set(options.client, emitClientModule(ir));
    const written = writeGenerated(files);
    const refused = written.filter((file) => file.status === 'refused');
    if (refused.length > 0) {
      finish(
        'refused',
        `mcp-taskgen --watch: refusing to overwrite ${refused.map((file) => display(file.path)).join(', ')}: ${refused.length === 1 ? 'it lacks' : 'they lack'} the generated header`,
      );
      return;
    }
    const tools = `${ir.tools.length} ${ir.tools.length === 1 ? 'tool' : 'tools'}`;
    const changedFiles = written.filter((file) => file.status === 'written');
    const outcome = changedFiles.length > 0 ? 'written' : 'unchanged';
    const reported = (changedFiles.length > 0 ? changedFiles : written).map((file) => display(file.path)).join(', ');
    finish(outcome, `mcp-taskgen --watch: ${outcome === 'written' ? 'wrote' : 'unchanged:'} ${reported} (${tools})`);
  };

  const flush = () => {
    timer = undefined;
    if (stopped) return;
    const changed = [...pending].sort();
    pending = new Set();
    run(changed, firstChangeAt);
  };

  const watcher: FSWatcher = watch(projectDir, { recursive: true }, (_event, filename) => {
    if (stopped || !filename) return;
    const file = path.resolve(projectDir, filename.toString());
    const isTsconfig = file === options.tsconfig;
    if (!isTsconfig && (!SOURCE_FILE.test(file) || outputs.has(file) || isIgnoredDirectory(file))) return;
    if (pending.size === 0) firstChangeAt = performance.now();
    pending.add(file);
    if (timer) clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  });

  run([], performance.now());
  options.log('mcp-taskgen --watch: watching for changes (Ctrl-C to stop)\n');

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      watcher.close();
    },
  };
}

function isIgnoredDirectory(file: string): boolean {
  const segments = file.split(path.sep);
  return segments.includes('node_modules') || segments.includes('.git');
}
