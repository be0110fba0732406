import { type InputResult, JsonRpcError, NeedsInput, Task, type TaskContext, Tool } from 'mcp-task-server';

export interface DeleteConfirmation {
  /** Delete the file? */
  confirm: boolean;
}

export interface GoAnswer {
  /** Go ahead? */
  go: boolean;
}

export interface CountedStep {
  /** What the step returned (replayed, not recomputed, on later runs and rounds). */
  stepValue: number;
  /** How often the step's function has run in this process for this label. */
  stepRunsInProcess: number;
}

/** Runs of `one_at_a_time` in progress in this process, and the most seen at once. */
const exclusive = { active: 0, most: 0 };

/** Runs of `counted_step`'s step per label, in this process: what fault tests count. */
const stepRuns = new Map<string, number>();

export interface NameAnswer {
  /** A name. */
  name: string;
}

/**
 * The tools the official conformance scenarios for the tasks extension call
 * (`@modelcontextprotocol/conformance`, `tasks-*`), written the way an app would write them.
 */
export class FixtureTools {
  /**
   * Greets someone, synchronously.
   * @param name Who to greet.
   */
  @Tool()
  async greet(name: string): Promise<string> {
    return `Hello, ${name}!`;
  }

  /**
   * Computes for a while, then reports what it computed.
   * @param seconds How long to compute; 0 answers at once.
   * @param label A label echoed in the result.
   */
  @Task({ ttlMs: 600_000, pollIntervalMs: 200 })
  async slowCompute(seconds: number, label: string, ctx: TaskContext): Promise<string> {
    ctx.progress(`computing ${label}`);
    await sleep(seconds * 1000, ctx.signal);
    return `Computed ${label} in ${seconds}s`;
  }

  /** Runs for about a second, then fails with a tool error. Only runs as a task. */
  @Task({ taskSupport: 'required', pollIntervalMs: 200 })
  async failingJob(ctx: TaskContext): Promise<string> {
    await sleep(1000, ctx.signal);
    throw new Error('The job failed on purpose');
  }

  /**
   * Deletes a file once the caller confirms.
   * @param filename The file to delete.
   */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<DeleteConfirmation>('confirm', { message: 'Delete the file?' })
  async confirmDelete(filename: string, ctx: TaskContext<{ confirm: DeleteConfirmation }>): Promise<string> {
    const answer = await ctx.input('confirm', { message: `Delete ${filename}?` });
    return answer.action === 'accept' && answer.content.confirm ? `Deleted ${filename}` : `Kept ${filename}`;
  }

  /** Asks for two names at once and greets both. */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<NameAnswer>('first', { message: 'First name?' })
  @NeedsInput<NameAnswer>('second', { message: 'Second name?' })
  async multiInput(ctx: TaskContext<{ first: NameAnswer; second: NameAnswer }>): Promise<string> {
    const [first, second] = await Promise.all([ctx.input('first'), ctx.input('second')]);
    return `Hello, ${nameOf(first)} and ${nameOf(second)}!`;
  }

  /** Asks for a first name, then for a last name. */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<NameAnswer>('first_name', { message: 'First name?' })
  @NeedsInput<NameAnswer>('last_name', { message: 'Last name?' })
  async askInTurn(ctx: TaskContext<{ first_name: NameAnswer; last_name: NameAnswer }>): Promise<string> {
    const first = await ctx.input('first_name');
    const last = await ctx.input('last_name', { message: `Last name of ${nameOf(first)}?` });
    return `Hello, ${nameOf(first)} ${nameOf(last)}!`;
  }

  /** Greets the caller by the name it asked for on the call, before the task started. */
  @Task({ taskSupport: 'required', pollIntervalMs: 200 })
  @NeedsInput<NameAnswer>('user_name', { message: 'What is your name?', upfront: true })
  async testToolWithTask(ctx: TaskContext<{ user_name: NameAnswer }>): Promise<string> {
    const name = await ctx.input('user_name');
    await sleep(100, ctx.signal);
    return `Hello, ${nameOf(name)}!`;
  }

  /**
   * Counts, once, then asks whether to go on: how tests see that work before a question runs
   * once, whether the call is a task (parked and replayed) or a multi-round-trip call.
   * @param label Which counter to use; a new label starts at 0.
   */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<GoAnswer>('go', { message: 'Go on?' })
  async countedStep(label: string, ctx: TaskContext<{ go: GoAnswer }>): Promise<CountedStep> {
    const stepValue = await ctx.step('count', () => {
      const next = (stepRuns.get(label) ?? 0) + 1;
      stepRuns.set(label, next);
      return next;
    });
    await ctx.input('go');
    return { stepValue, stepRunsInProcess: stepRuns.get(label) ?? 0 };
  }

  /**
   * Holds a slot for a while; at most one runs at a time in a process, whatever the worker's
   * concurrency. Reports the most runs it saw at once in this process.
   * @param ms How long to hold the slot.
   */
  @Task({ concurrency: 1, pollIntervalMs: 200 })
  async oneAtATime(ms: number, ctx: TaskContext): Promise<{ mostAtOnce: number }> {
    exclusive.active++;
    exclusive.most = Math.max(exclusive.most, exclusive.active);
    try {
      await sleep(ms, ctx.signal);
    } finally {
      exclusive.active--;
    }
    return { mostAtOnce: exclusive.most };
  }

  /** Fails with a JSON-RPC error instead of a tool result. */
  @Task({ pollIntervalMs: 200 })
  async protocolErrorJob(ctx: TaskContext): Promise<string> {
    await sleep(200, ctx.signal);
    throw new JsonRpcError(-32603, 'The job hit a protocol error on purpose', { reason: 'simulated' });
  }
}

function nameOf(answer: InputResult<NameAnswer>): string {
  return answer.action === 'accept' ? answer.content.name : `(${answer.action})`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
