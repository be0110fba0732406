import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Integer, JsonRpcError, Task, type TaskContext } from 'mcp-task-server';

export interface ChecksumRequest {
  /** Directory to checksum, relative to the server's root. */
  path: string;
  /**
   * Files per batch: each batch is a child task of its own, run by whichever worker is free.
   * @minimum 1
   * @maximum 1000
   * @default 25
   */
  batchSize?: Integer;
}

export interface ChecksumReport {
  path: string;
  files: Integer;
  bytes: Integer;
  batches: Integer;
  /** SHA-256 over every file's `path:sha256` line, in path order: one value for the whole tree. */
  digest: string;
}

export interface BatchRequest {
  /** Directory the files are in, relative to the server's root. */
  path: string;
  /**
   * Files to hash, relative to `path`.
   * @maxItems 1000
   */
  files: string[];
}

export interface BatchReport {
  sums: FileSum[];
}

export interface FileSum {
  path: string;
  sha256: string;
  bytes: Integer;
}

/**
 * This app's tools as the generated module types them, for a typed `ctx.spawn`. An `import()`
 * type rather than an import: the generated module loads this class, so this file must not
 * load it back, even for types.
 */
type AppTools = import('./__generated__/tasks.generated.js').TaskTools;

/** Files at most; a bound on the listing kept in the task record. */
const MAX_FILES = 20_000;

/**
 * A task that fans out over the worker fleet: it lists the files once (a `ctx.step`), starts a
 * `checksum_batch` child task per batch with `ctx.spawn`, and waits for them all with
 * `ctx.all`. While it waits it holds no worker and says "3 of 10 subtasks done"; on Redis the
 * batches run on every worker process at once, and a parent that runs again (after a worker
 * is lost) finds the children it started rather than starting them twice.
 */
export class Checksummer {
  constructor(private readonly root: string) {}

  /** Checksums every file under a directory, one child task per batch of files. */
  @Task({ title: 'Checksum a directory', ttlMs: 3_600_000, pollIntervalMs: 500, taskSupport: 'required' })
  async checksumTree(request: ChecksumRequest, ctx: TaskContext<{}, AppTools>): Promise<ChecksumReport> {
    const directory = this.resolve(request.path);
    const files = await ctx.step('list', () => listFiles(directory, ctx.signal));
    const batchSize = request.batchSize ?? 25;
    const children = [];
    for (let start = 0; start < files.length; start += batchSize) {
      children.push(
        await ctx.spawn('checksum_batch', { path: request.path, files: files.slice(start, start + batchSize) }),
      );
    }
    const batches = await ctx.all(children);

    const all = batches.flatMap((batch) => batch.sums);
    const digest = createHash('sha256');
    for (const sum of all) digest.update(`${sum.path}:${sum.sha256}\n`);
    return {
      path: request.path,
      files: all.length,
      bytes: all.reduce((total, sum) => total + sum.bytes, 0),
      batches: children.length,
      digest: digest.digest('hex'),
    };
  }

  /** Hashes one batch of files (the child task `checksum_tree` starts per batch). */
  @Task({ title: 'Checksum a batch of files', ttlMs: 3_600_000, pollIntervalMs: 500, taskSupport: 'required' })
  async checksumBatch(request: BatchRequest, ctx: TaskContext): Promise<BatchReport> {
    const directory = this.resolve(request.path);
    for (const file of request.files) this.resolve(path.join(request.path, file));
    return { sums: await hashBatch(directory, request.files, ctx.signal) };
  }

  private resolve(relative: string): string {
    const resolved = path.resolve(this.root, relative);
    if (resolved !== this.root && !resolved.startsWith(this.root + path.sep)) {
      throw new JsonRpcError(-32602, `path must stay inside the server's root: ${relative}`);
    }
    return resolved;
  }
}

/** Files under `directory`, relative to it, `/`-separated and sorted; dot folders and node_modules left out. */
async function listFiles(directory: string, signal: AbortSignal): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string) => {
    signal.throwIfAborted();
    const entries = await readdir(path.join(directory, relative), { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) found.push(child);
      if (found.length > MAX_FILES)
        throw new Error(`more than ${MAX_FILES} files under the directory; pick a smaller one`);
    }
  };
  await walk('');
  return found.sort();
}

async function hashBatch(directory: string, files: string[], signal: AbortSignal): Promise<FileSum[]> {
  const sums: FileSum[] = [];
  for (const file of files) {
    signal.throwIfAborted();
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of createReadStream(path.join(directory, file), { signal }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    sums.push({ path: file, sha256: hash.digest('hex'), bytes });
  }
  return sums;
}
