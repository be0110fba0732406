/**
 * The ci-wait example's tool: starts a CI job, hands the CI the task's callback URL, waits for
 * the CI to call back (holding no worker), then waits a little and polls the CI once more for
 * the artifacts it publishes after its conclusion.
 */
import { Task, type TaskContext } from 'mcp-task-server';

/** What the CI POSTs to the callback URL when the pipeline ends. */
export interface CiConclusion {
  readonly jobId: string;
  readonly conclusion: 'success' | 'failure';
  /** Test counts of the run. */
  readonly stats: { readonly tests: number; readonly failed: number };
}

/** What `run_pipeline` returns. */
export interface PipelineReport {
  readonly jobId: string;
  /** `timed_out` when the CI did not call back within `timeoutMs`. */
  readonly conclusion: 'success' | 'failure' | 'timed_out';
  readonly failedTests?: number;
  /** Artifacts the CI had published by the poll after the conclusion. */
  readonly artifacts: string[];
}

/** What `run_pipeline` takes. */
export interface PipelineRequest {
  /** The branch, tag or commit to build. */
  readonly ref: string;
  /**
   * How long to wait for the CI's callback, in milliseconds (default one hour).
   * @minimum 100
   */
  readonly timeoutMs?: number;
}

/** How long to wait after the conclusion before polling for artifacts. */
export const ARTIFACT_POLL_DELAY_MS = 300;

export class Pipelines {
  /** @param ciUrl The CI service's base URL (the stub's, in the tests). */
  constructor(private readonly ciUrl: string) {}

  /** Runs the CI pipeline of a git ref and reports its conclusion. */
  @Task({ ttlMs: 7_200_000, taskSupport: 'required' })
  async runPipeline(request: PipelineRequest, context: TaskContext): Promise<PipelineReport> {
    const { ref, timeoutMs = 60 * 60 * 1000 } = request;
    // The same hook on every replay: the CI gets one URL, however often the method runs.
    const hook = await context.callback<CiConclusion>('ci', { timeoutMs });
    // Started once: a replayed run finds the job id in its step.
    const jobId = await context.step('start', async () => {
      const response = await fetch(`${this.ciUrl}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ref, notify: hook.url }),
      });
      return ((await response.json()) as { id: string }).id;
    });
    context.progress(`CI job ${jobId} started for ${ref}`);
    const outcome = await hook.wait();
    if (outcome.status === 'timed_out') return { jobId, conclusion: 'timed_out', artifacts: [] };
    // Artifacts appear a little after the conclusion: wait, then poll once (a durable sleep, so a
    // long cool-down holds no worker and survives restarts).
    await context.sleep(ARTIFACT_POLL_DELAY_MS, { name: 'cool-down' });
    const artifacts = await context.step('poll', async () => {
      const response = await fetch(`${this.ciUrl}/jobs/${jobId}`);
      return ((await response.json()) as { artifacts: string[] }).artifacts;
    });
    return {
      jobId,
      conclusion: outcome.payload.conclusion,
      failedTests: outcome.payload.stats.failed,
      artifacts,
    };
  }
}
