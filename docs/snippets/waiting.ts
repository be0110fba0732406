import { Task, type TaskContext } from 'mcp-task-server';

export interface BuildRequest {
  /** The repository to build. */
  repository: string;
}

interface BuildStatus {
  readonly id: string;
  readonly done: boolean;
}

// #region sleep
export class Builds {
  @Task({ ttlMs: 24 * 3600 * 1000 })
  async waitForBuild(request: BuildRequest, ctx: TaskContext): Promise<{ id: string; polls: number }> {
    // Once over the task's life: a replay after a sleep gets the stored build back.
    const build = await ctx.step('start', () => startBuild(request.repository));
    for (let poll = 1; poll <= 20; poll++) {
      const status = await ctx.step(`poll-${poll}`, () => buildStatus(build.id));
      if (status.done) return { id: build.id, polls: poll };
      // No worker is held while the task sleeps; on Redis it survives restarts of every process.
      await ctx.sleep('15m');
    }
    throw new Error(`build ${build.id} did not finish in 5 hours`);
  }
}
// #endregion sleep

// #region sleep-named
export class Reports {
  @Task()
  async sendDigest(ctx: TaskContext): Promise<string> {
    await ctx.step('draft', () => draftDigest());
    // Named sleeps keep their replay keys apart when a branch adds or skips one.
    await ctx.sleep(90_000, { name: 'cool-down' });
    return ctx.step('send', () => sendNow());
  }
}
// #endregion sleep-named

async function startBuild(repository: string): Promise<BuildStatus> {
  return { id: `build-of-${repository}`, done: false };
}

async function buildStatus(id: string): Promise<BuildStatus> {
  return { id, done: true };
}

async function draftDigest(): Promise<string> {
  return 'draft';
}

async function sendNow(): Promise<string> {
  return 'sent';
}
