import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Integer, JsonRpcError, Task, type TaskContext } from 'mcp-task-server';

export interface ChecksumRequest {
  /** Directory to checksum, relative to the server's root. */
  path: string;
  /**
   * Batches hashed at the same time.
   * @minimum 1
   * @maximum 16
   * @default 4
   */
  parallel?: Integer;
  /**
   * Files per batch.
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

interface FileSum {
  path: string;
  sha256: string;
  bytes: number;
}

/** Files at most; a bound on the listing kept in the task record. */
const MAX_FILES = 20_000;

/**
 * A task that fans out: it lists the files once, splits them into batches, hashes up to
 * `parallel` batches at a time and reports progress as files done out of files in all. The
 * listing and each batch are `ctx.step`s, so a task that runs again (on Redis, after a worker
 * is lost) does not redo the work already recorded.
 */
export class Checksummer {
  constructor(private readonly root: string) {}

  /** Checksums every file under a directory in parallel batches, reporting progress as a fraction. */
  @Task({ title: 'Checksum a directory', ttlMs: 3_600_000, pollIntervalMs: 500 })
  async checksumTree(request: ChecksumRequest, ctx: TaskContext): Promise<ChecksumReport> {
    const directory = this.resolve(request.path);
    const files = await ctx.step('list', () => listFiles(directory, ctx.signal));
    const batchSize = request.batchSize ?? 25;
    const batches: string[][] = [];
    for (let start = 0; start < files.length; start += batchSize) batches.push(files.slice(start, start + batchSize));

    let done = 0;
    ctx.progress({ message: `0 of ${files.length} files`, progress: 0, total: files.length });
    const sums: FileSum[][] = new Array(batches.length);
    let next = 0;
    // `parallel` lanes, each taking the next batch until none is left.
    const lane = async () => {
      for (let index = next++; index < batches.length; index = next++) {
        const batch = batches[index]!;
        sums[index] = await ctx.step(`batch-${index}`, () => hashBatch(directory, batch, ctx.signal));
        done += batch.length;
        ctx.progress({ message: `${done} of ${files.length} files`, progress: done, total: files.length });
      }
    };
    await Promise.all(Array.from({ length: Math.min(request.parallel ?? 4, batches.length) }, lane));

    const all = sums.flat();
    const digest = createHash('sha256');
    for (const sum of all) digest.update(`${sum.path}:${sum.sha256}\n`);
    return {
      path: request.path,
      files: all.length,
      bytes: all.reduce((total, sum) => total + sum.bytes, 0),
      batches: batches.length,
      digest: digest.digest('hex'),
    };
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
