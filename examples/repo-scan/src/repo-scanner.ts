import { opendir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Integer, JsonRpcError, Task, type TaskContext, Tool } from 'mcp-task-server';

export interface ScanRequest {
  /** Directory to scan, relative to the server's scan root. */
  path: string;
  /** File extensions to count, without the dot (`["ts", "md"]`). Every file when omitted. */
  extensions?: string[];
  /**
   * Directory names to skip wherever they appear.
   * @default ["node_modules", ".git"]
   */
  exclude?: string[];
  /**
   * How many of the largest files to list.
   * @default 5
   */
  top?: Integer;
}

export interface ExtensionStats {
  /** The extension without the dot, or `(none)`. */
  extension: string;
  files: Integer;
  lines: Integer;
  bytes: Integer;
}

export interface FileStats {
  /** Path relative to the scanned directory. */
  path: string;
  lines: Integer;
  bytes: Integer;
}

export interface ScanReport {
  /** The scanned directory, relative to the scan root. */
  path: string;
  files: Integer;
  lines: Integer;
  bytes: Integer;
  /** Per extension, most lines first. */
  byExtension: ExtensionStats[];
  /** The largest files by line count. */
  largest: FileStats[];
}

/** Reads files no larger than this; bigger ones count by size only (they are rarely source). */
const MAX_READ_BYTES = 2 * 1024 * 1024;
const PROGRESS_EVERY_FILES = 250;

/**
 * Scans directory trees below one root: the kind of long, cancellable job an assistant starts
 * and checks on later.
 */
export class RepoScanner {
  constructor(private readonly scanRoot: string) {}

  /**
   * Counts files, lines and bytes under a directory, per extension, and lists the largest files.
   * Large trees take minutes; progress reports how far it got.
   */
  @Task({ title: 'Scan a repository', ttlMs: 3_600_000, pollIntervalMs: 500 })
  async scanRepository(request: ScanRequest, ctx: TaskContext): Promise<ScanReport> {
    const root = this.resolveInsideRoot(request.path);
    const exclude = new Set(request.exclude ?? ['node_modules', '.git']);
    const extensions = request.extensions?.map((ext) => ext.replace(/^\./, '').toLowerCase());
    const byExtension = new Map<string, ExtensionStats>();
    const files: FileStats[] = [];
    const pending = [root];
    let totals = { files: 0, lines: 0, bytes: 0 };

    while (pending.length > 0) {
      ctx.signal.throwIfAborted();
      const directory = pending.pop() as string;
      for await (const entry of await opendir(directory)) {
        const full = path.join(directory, entry.name);
        if (entry.isDirectory()) {
          if (!exclude.has(entry.name)) pending.push(full);
          continue;
        }
        if (!entry.isFile()) continue;
        const extension = path.extname(entry.name).slice(1).toLowerCase() || '(none)';
        if (extensions && !extensions.includes(extension)) continue;
        const { lines, bytes } = await measure(full);
        const relative = path.relative(root, full).split(path.sep).join('/');
        files.push({ path: relative, lines, bytes });
        const stats = byExtension.get(extension) ?? { extension, files: 0, lines: 0, bytes: 0 };
        byExtension.set(extension, {
          extension,
          files: stats.files + 1,
          lines: stats.lines + lines,
          bytes: stats.bytes + bytes,
        });
        totals = { files: totals.files + 1, lines: totals.lines + lines, bytes: totals.bytes + bytes };
        if (totals.files % PROGRESS_EVERY_FILES === 0) {
          ctx.progress({ message: `scanned ${totals.files} files, ${totals.lines} lines`, progress: totals.files });
          ctx.signal.throwIfAborted();
        }
      }
    }

    const largest = files.sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path)).slice(0, request.top ?? 5);
    return {
      path: request.path,
      ...totals,
      byExtension: [...byExtension.values()].sort(
        (a, b) => b.lines - a.lines || a.extension.localeCompare(b.extension),
      ),
      largest,
    };
  }

  /** Lists the directories directly below the scan root, to pick one to scan. */
  @Tool({ title: 'List scannable directories' })
  async listDirectories(): Promise<{ directories: string[] }> {
    const directories: string[] = [];
    for await (const entry of await opendir(this.scanRoot)) {
      if (entry.isDirectory() && !entry.name.startsWith('.')) directories.push(entry.name);
    }
    return { directories: directories.sort() };
  }

  private resolveInsideRoot(requested: string): string {
    const resolved = path.resolve(this.scanRoot, requested);
    const relative = path.relative(this.scanRoot, resolved);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      throw new JsonRpcError(-32602, `path must stay inside the scan root; '${requested}' does not`);
    }
    return resolved;
  }
}

async function measure(file: string): Promise<{ lines: number; bytes: number }> {
  const { size } = await stat(file);
  if (size === 0 || size > MAX_READ_BYTES) return { lines: 0, bytes: size };
  const content = await readFile(file);
  let lines = 0;
  for (let at = content.indexOf(10); at !== -1; at = content.indexOf(10, at + 1)) lines++;
  // A last line without a newline still counts.
  if (content[content.length - 1] !== 10) lines++;
  return { lines, bytes: size };
}
