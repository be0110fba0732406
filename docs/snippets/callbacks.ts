import { createTaskServer, Task, type TaskContext } from 'mcp-task-server';
import { createTestHarness } from 'mcp-task-server/testing';
import { taskManifest } from './callbacks/__generated__/tasks.generated.js';

// #region hook
/** What the CI POSTs when the pipeline ends: nested objects are fine. */
export interface BuildFinished {
  conclusion: 'success' | 'failure';
  run: { id: string; url: string };
}

/** What `build` returns. */
export interface BuildReport {
  passed: boolean;
  /** The CI run's page, when it called back. */
  run?: string;
}

export class Builds {
  @Task({ ttlMs: 86_400_000 })
  async build(request: { ref: string }, ctx: TaskContext): Promise<BuildReport> {
    // The same hook (id, URL) every time the method runs for this task.
    const hook = await ctx.callback<BuildFinished>('ci', { timeoutMs: 6 * 3_600_000 });
    // Started once: a replay finds the step's result instead of starting a second build.
    await ctx.step('start', () => startBuild(request.ref, hook.url));
    // Parks the task ("waiting for callback ci") on no worker until the CI POSTs or 6 h pass.
    const outcome = await hook.wait();
    if (outcome.status === 'timed_out') return { passed: false };
    return { passed: outcome.payload.conclusion === 'success', run: outcome.payload.run.url };
  }
}
// #endregion hook

async function startBuild(_ref: string, _notify: string): Promise<void> {}

export function server() {
  // #region public-url
  const server = createTaskServer({
    manifest: taskManifest,
    instances: [new Builds()],
    // Where the CI reaches this server; callback URLs are <publicUrl>/callbacks/<token>.
    publicUrl: 'https://tasks.example.com',
    limits: { maxCallbackBodyBytes: 16 * 1024, callbackPostsPerSecond: 50 },
  });
  // #endregion public-url
  return server;
}

export async function testKit(url: string) {
  // #region test-kit
  const harness = await createTestHarness({ manifest: taskManifest, instances: [new Builds()] });
  const task = await harness.call('build', { ref: 'main' });
  // `url` is the hook URL your fake CI received: POST to it through the server's own route.
  const posted = await harness.deliverCallback(url, { conclusion: 'success', run: { id: '7', url: 'https://ci/7' } });
  // 200 taken; 400 when the body does not fit BuildFinished (the task keeps waiting).
  console.log(posted.status, (await task.result()).structuredContent);
  // The test clock drives callback timeouts too: harness.clock.advance(6 * 3_600_000 + 1).
  await harness.close();
  // #endregion test-kit
}
