import { opendir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type Integer, JsonRpcError, NeedsInput, Task, type TaskContext, Tool } from 'mcp-task-server';

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

export interface CleanRequest {
  /** Directory to clean, relative to the server's scan root. */
  path: string;
  /**
   * Folder names that hold build output, wherever they appear.
   * @default ["dist", "build", "coverage", ".cache"]
   */
  names?: string[];
}

export interface CleanupApproval {
  /** Delete the folders listed in the question? */
  confirm: boolean;
}

export interface BuildFolder {
  /** Path relative to the cleaned directory. */
  path: string;
  bytes: Integer;
}

export interface CleanReport {
  deleted: BuildFolder[];
  /** Folders found but left in place (the question was declined). */
  kept: BuildFolder[];
  bytesFreed: Integer;
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

  /**
   * Finds build output folders (dist, build, coverage, .cache) below a directory and deletes them
   * once you approve the list.
   */
  @Task({ title: 'Clean build outputs', ttlMs: 3_600_000, pollIntervalMs: 500 })
  @NeedsInput<CleanupApproval>('approval', { message: 'Delete these build folders?' })
  async cleanBuildOutputs(
    request: CleanRequest,
    ctx: TaskContext<{ approval: CleanupApproval }>,
  ): Promise<CleanReport> {
    const root = this.resolveInsideRoot(request.path);
    const names = new Set(request.names ?? ['dist', 'build', 'coverage', '.cache']);
    // Found once: if the task pauses for the answer and runs again, it asks about the same list.
    const found = await ctx.step('find', () => findFolders(root, names, ctx.signal));
    if (found.length === 0) return { deleted: [], kept: [], bytesFreed: 0 };

    const total = found.reduce((sum, folder) => sum + folder.bytes, 0);
    const listing = found.map((folder) => `${folder.path} (${formatBytes(folder.bytes)})`).join(', ');
    const approval = await ctx.input('approval', {
      message: `Delete ${found.length} build folder${found.length === 1 ? '' : 's'}, ${formatBytes(total)} in all: ${listing}?`,
    });
    if (approval.action !== 'accept' || !approval.content.confirm) return { deleted: [], kept: found, bytesFreed: 0 };

    const deleted: BuildFolder[] = [];
    for (const folder of found) {
      ctx.signal.throwIfAborted();
      ctx.progress(`deleting ${folder.path}`);
      await rm(path.join(root, folder.path), { recursive: true, force: true });
      deleted.push(folder);
    }
    return { deleted, kept: [], bytesFreed: total };
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

/** Build folders below `root` (not descending into them, nor into node_modules or .git). */
async function findFolders(root: string, names: ReadonlySet<string>, signal: AbortSignal): Promise<BuildFolder[]> {
  const found: BuildFolder[] = [];
  const pending = [root];
  while (pending.length > 0) {
    signal.throwIfAborted();
    const directory = pending.pop() as string;
    for await (const entry of await opendir(directory)) {
      if (!entry.isDirectory() || entry.name === 'node_modules' || entry.name === '.git') continue;
      const full = path.join(directory, entry.name);
      if (names.has(entry.name)) {
        found.push({ path: path.relative(root, full).split(path.sep).join('/'), bytes: await folderSize(full) });
      } else {
        pending.push(full);
      }
    }
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

async function folderSize(folder: string): Promise<number> {
  let bytes = 0;
  for await (const entry of await opendir(folder)) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) bytes += await folderSize(full);
    else if (entry.isFile()) bytes += (await stat(full)).size;
  }
  return bytes;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
