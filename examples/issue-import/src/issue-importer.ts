import { type Integer, NeedsInput, Task, type TaskContext } from 'mcp-task-server';
import { DEFAULT_RETRY, getJson, type RetryPolicy } from './http-json.js';

export interface ImportRequest {
  /** The project whose issues to import, as the tracker names it (`acme/website`). */
  project: string;
  /**
   * Ask before fetching more pages than this.
   * @minimum 1
   * @maximum 1000
   * @default 3
   */
  askAbovePages?: Integer;
  /**
   * Milliseconds to wait between two pages, for trackers with a strict rate limit. The task
   * sleeps with `ctx.sleep`, holding no worker meanwhile.
   * @minimum 0
   * @maximum 3600000
   */
  pauseBetweenPagesMs?: Integer;
}

export interface ImportApproval {
  /** Fetch every page? No fetches the first page only. */
  confirm: boolean;
}

export interface ImportReport {
  project: string;
  /** Pages fetched, of `totalPages`. */
  pages: Integer;
  totalPages: Integer;
  issues: Integer;
  open: Integer;
  closed: Integer;
  /** Requests that failed and were tried again. */
  retries: Integer;
}

/** One page of the tracker's `GET /projects/{project}/issues?page={n}`. */
export interface IssuePage {
  issues: { id: number; title: string; state: 'open' | 'closed' }[];
  page: number;
  totalPages: number;
}

/**
 * Imports a project's issues from an issue tracker's HTTP API, page by page: the shape of most
 * tasks that call someone else's service. Each page is a `ctx.step`, so on Redis, where a task
 * runs again from the top after a question, pages already fetched are not fetched again.
 */
export class IssueImporter {
  constructor(
    /** The tracker's API root (`ISSUES_API_URL`). */
    private readonly apiUrl: string,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  /** Imports the issues of a project from the issue tracker, asking first when there are many pages. */
  @Task({ title: 'Import issues', ttlMs: 3_600_000, pollIntervalMs: 1_000 })
  @NeedsInput<ImportApproval>('approval', { message: 'This project has many pages of issues. Fetch them all?' })
  async importIssues(request: ImportRequest, ctx: TaskContext<{ approval: ImportApproval }>): Promise<ImportReport> {
    const first = await ctx.step('page-1', () => this.fetchPage(request.project, 1, ctx.signal));
    const totalPages = first.body.totalPages;
    let lastPage = totalPages;
    if (totalPages > (request.askAbovePages ?? 3)) {
      const answer = await ctx.input('approval', {
        message: `${request.project} has ${totalPages} pages of issues. Fetch them all?`,
      });
      if (answer.action !== 'accept' || !answer.content.confirm) lastPage = 1;
    }

    const pages = [first];
    ctx.progress({ message: `page 1 of ${lastPage}`, progress: 1, total: lastPage });
    for (let page = 2; page <= lastPage; page++) {
      // A cool-down before each further page: on Redis the worker is free meanwhile, and the
      // method runs again from the top at the wake time, finding the pages already fetched.
      if (request.pauseBetweenPagesMs) await ctx.sleep(request.pauseBetweenPagesMs, { name: `pause-${page}` });
      pages.push(await ctx.step(`page-${page}`, () => this.fetchPage(request.project, page, ctx.signal)));
      ctx.progress({ message: `page ${page} of ${lastPage}`, progress: page, total: lastPage });
    }

    const issues = pages.flatMap((fetched) => fetched.body.issues);
    return {
      project: request.project,
      pages: pages.length,
      totalPages,
      issues: issues.length,
      open: issues.filter((issue) => issue.state === 'open').length,
      closed: issues.filter((issue) => issue.state === 'closed').length,
      retries: pages.reduce((sum, fetched) => sum + fetched.retries, 0),
    };
  }

  private fetchPage(project: string, page: number, signal: AbortSignal) {
    const url = new URL(
      `projects/${encodeURIComponent(project)}/issues`,
      this.apiUrl.endsWith('/') ? this.apiUrl : `${this.apiUrl}/`,
    );
    url.searchParams.set('page', String(page));
    return getJson<IssuePage>(url.href, signal, this.retry);
  }
}
