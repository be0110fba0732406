import { ChildTaskFailedError, createTaskServer, isTaskPaused, Task, type TaskContext } from 'mcp-task-server';
import { taskManifest } from './quick-start/__generated__/tasks.generated.js';
import { Primes } from './quick-start/primes.js';

// #region tools
/** The app's tools, as the generated module's `TaskTools` gives them (input and result per tool). */
type Tools = {
  fetch_page: { readonly input: { url: string }; readonly output: { url: string; bytes: number } };
  crawl: { readonly input: { urls: string[] }; readonly output: { bytes: number } };
};
// In an app: type Tools = import('./__generated__/tasks.generated.js').TaskTools;
// #endregion tools

export class Crawler {
  @Task()
  async fetchPage(input: { url: string }): Promise<{ url: string; bytes: number }> {
    const response = await fetch(input.url);
    return { url: input.url, bytes: (await response.arrayBuffer()).byteLength };
  }

  // #region spawn
  @Task()
  async crawl(input: { urls: string[] }, ctx: TaskContext<{}, Tools>): Promise<{ bytes: number }> {
    // One child task per page: each runs on whichever worker is free, as a task of its own.
    const children = [];
    for (const url of input.urls) children.push(await ctx.spawn('fetch_page', { url }));
    // Parked meanwhile: `working`, "3 of 10 subtasks done", holding no worker.
    const pages = await ctx.all(children);
    return { bytes: pages.reduce((sum, page) => sum + page.bytes, 0) };
  }
  // #endregion spawn

  // #region catch
  @Task()
  async crawlOne(input: { url: string }, ctx: TaskContext<{}, Tools>): Promise<{ bytes: number }> {
    const child = await ctx.spawn('fetch_page', { url: input.url });
    try {
      return { bytes: (await child.result()).bytes };
    } catch (error) {
      // Let the park through; a child that failed names itself: "Child task fetch_page (id) failed: ...".
      if (isTaskPaused(error) || !(error instanceof ChildTaskFailedError)) throw error;
      ctx.log.warn('page failed', { child: error.childTaskId, reason: error.reason });
      return { bytes: 0 };
    }
  }
  // #endregion catch

  @Task()
  async typed(_input: Record<string, never>, ctx: TaskContext<{}, Tools>): Promise<void> {
    // #region typed
    // @ts-expect-error: no tool of the app is named fetch_pages
    await ctx.spawn('fetch_pages', { url: 'https://example.com' });
    // @ts-expect-error: fetch_page takes { url: string }
    await ctx.spawn('fetch_page', { address: 'https://example.com' });
    // #endregion typed
  }
}

// #region limits
// At most 200 children per task (default 1000); children count against their principal's quotas.
createTaskServer({
  manifest: taskManifest,
  instances: [new Primes()],
  limits: { maxChildrenPerTask: 200, maxLiveTasksPerPrincipal: 5000 },
});
// #endregion limits
