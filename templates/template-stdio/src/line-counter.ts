import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type Integer, Task, type TaskContext } from 'mcp-task-server';

export interface CountRequest {
  /** The folder to count, absolute or relative to where the client started the server. */
  directory: string;
  /**
   * Stop after this many files.
   * @minimum 1
   * @maximum 100000
   * @default 10000
   */
  maxFiles?: Integer;
}

export interface CountReport {
  directory: string;
  /** Files read (folders named node_modules or starting with a dot are left out). */
  files: Integer;
  lines: Integer;
  /** Whether it stopped at `maxFiles`. */
  truncated: boolean;
}

/**
 * Local work for a desktop client: the kind of tool a stdio server is for, reading the files of
 * the machine it runs on. Add methods or classes of your own (and their instances to server.ts).
 */
export class LineCounter {
  /** Counts the files and lines under a folder on this machine, reporting progress. */
  @Task({ title: 'Count lines in a folder' })
  async countLines(request: CountRequest, ctx: TaskContext): Promise<CountReport> {
    const directory = path.resolve(request.directory);
    const maxFiles = request.maxFiles ?? 10_000;
    let files = 0;
    let lines = 0;
    for await (const file of filesUnder(directory)) {
      ctx.signal.throwIfAborted(); // the task was cancelled
      if (files === maxFiles) return { directory, files, lines, truncated: true };
      lines += await countLinesOf(file);
      files += 1;
      if (files % 100 === 0) ctx.progress(`${files} files, ${lines} lines so far`);
    }
    return { directory, files, lines, truncated: false };
  }
}

async function* filesUnder(directory: string): AsyncGenerator<string> {
  // Any error (a missing folder) ends the call as a tool error the model can read.
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

async function countLinesOf(file: string): Promise<number> {
  let newlines = 0;
  let last = 10;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const byte of chunk) if (byte === 10) newlines += 1;
    last = chunk.at(-1) ?? last;
  }
  // A last line without a newline still counts.
  return last === 10 ? newlines : newlines + 1;
}
