// #region retry
import { NonRetryableError, Task, type TaskContext } from 'mcp-task-server';

/** Where release notes come from: an HTTP API in production, a stub in tests. */
export interface NotesSource {
  /** The notes of `tag`, or `undefined` when the repository has no such release. */
  fetchNotes(repo: string, tag: string, signal: AbortSignal): Promise<string | undefined>;
}

export class ReleaseNotes {
  constructor(private readonly source: NotesSource) {}

  /** Fetches the notes of one release from an upstream that fails now and then. */
  @Task({
    // 5 runs in all: waits of 200, 400, 800 ms, then 1.6 s (never more than 5 s) between them.
    retry: { attempts: 5, backoff: 'exponential', delayMs: 200, maxDelayMs: 5000 },
    // Each attempt gets a second; then ctx.signal aborts and the attempt counts as failed.
    timeoutMs: 1000,
  })
  async releaseNotes(repo: string, tag: string, ctx: TaskContext): Promise<{ notes: string; attempt: number }> {
    const notes = await this.source.fetchNotes(repo, tag, ctx.signal);
    // No attempt can find a release that does not exist: fail now, without retrying.
    if (notes === undefined) throw new NonRetryableError(`${repo} has no release ${tag}`);
    return { notes, attempt: ctx.attempt };
  }
}
// #endregion retry

// #region timeout
export class Mirror {
  /** Downloads one file; a connection that hangs gives up after 30 s. */
  @Task({ timeoutMs: 30_000 })
  async download(url: string, ctx: TaskContext): Promise<{ bytes: number }> {
    // Pass the signal on: at the limit it aborts with "timed out after 30 s".
    const response = await fetch(url, { signal: ctx.signal });
    return { bytes: (await response.arrayBuffer()).byteLength };
  }
}
// #endregion timeout
