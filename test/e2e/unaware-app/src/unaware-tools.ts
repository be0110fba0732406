import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';

/** What `hold_job` reports when it ends. */
export interface HoldReport {
  /** The label it was started with. */
  label: string;
  /** True when the test let it finish; false when it ran its whole time. */
  released: boolean;
}

/** What to do with a file. */
export interface Verdict {
  /** Keep, archive or delete the file. */
  action: 'keep' | 'archive' | 'delete';
}

/** How a `hold_job` run ended: let go by the test, out of time, or stopped (cancelled). */
export type HoldEnd = 'released' | 'ran out' | 'stopped';

/** A held run: how the test lets it finish, and how it learns the run began and ended. */
interface Hold {
  readonly started: Promise<void>;
  markStarted(): void;
  readonly released: Promise<void>;
  release(): void;
  readonly ended: Promise<HoldEnd>;
  markEnded(how: HoldEnd): void;
}

function newHold(): Hold {
  let markStarted!: () => void;
  let release!: () => void;
  let markEnded!: (how: HoldEnd) => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const ended = new Promise<HoldEnd>((resolve) => {
    markEnded = resolve;
  });
  return { started, markStarted, released, release, ended, markEnded };
}

/**
 * Tools for the tests of clients that cannot receive tasks: a long task whose end the test
 * controls (so a test never sleeps for it, and the task still truly outlives the call that
 * started it), a task that asks a question, and a quick task.
 */
export class UnawareTools {
  private readonly holds = new Map<string, Hold>();

  /**
   * Works on a job until it is let go, for at most `seconds`.
   * @param label Names the job; echoed in the report.
   * @param seconds The longest the job works.
   */
  @Task({ pollIntervalMs: 200 })
  async holdJob(label: string, seconds: number, ctx: TaskContext): Promise<HoldReport> {
    const hold = this.hold(label);
    ctx.progress(`working on ${label}`);
    hold.markStarted();
    try {
      const released = await Promise.race([
        hold.released.then(() => true),
        sleep(seconds * 1000, ctx.signal).then(() => false),
      ]);
      hold.markEnded(released ? 'released' : 'ran out');
      return { label, released };
    } catch (error) {
      hold.markEnded('stopped');
      throw error;
    }
  }

  /**
   * Asks what to do with a file, then does it.
   * @param filename The file to decide about.
   */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<Verdict>('verdict', { message: 'What should happen to the file?' })
  async triageFile(filename: string, ctx: TaskContext<{ verdict: Verdict }>): Promise<string> {
    const answer = await ctx.input('verdict', { message: `What should happen to ${filename}?` });
    return answer.action === 'accept' ? `${filename}: ${answer.content.action}` : `${filename}: left alone`;
  }

  /**
   * Works on a job until it is let go, then asks what to do with its output.
   * @param label Names the job; the answer is reported with it.
   */
  @Task({ pollIntervalMs: 200 })
  @NeedsInput<Verdict>('verdict', { message: 'What should happen to the output?' })
  async holdThenAsk(label: string, ctx: TaskContext<{ verdict: Verdict }>): Promise<string> {
    const hold = this.hold(label);
    hold.markStarted();
    await Promise.race([hold.released, aborted(ctx.signal)]);
    const answer = await ctx.input('verdict', { message: `What should happen to the output of ${label}?` });
    hold.markEnded('released');
    return answer.action === 'accept' ? `${label}: ${answer.content.action}` : `${label}: left alone`;
  }

  /**
   * Adds two numbers as a task that ends at once.
   * @param a The first number.
   * @param b The second number.
   */
  @Task({ pollIntervalMs: 200 })
  async quickSum(a: number, b: number): Promise<string> {
    return `${a} + ${b} = ${a + b}`;
  }

  /** Resolves once the `hold_job` run with this label has begun. */
  started(label: string): Promise<void> {
    return this.hold(label).started;
  }

  /** Resolves with how the `hold_job` run with this label ended. */
  ended(label: string): Promise<HoldEnd> {
    return this.hold(label).ended;
  }

  /** Lets the `hold_job` run with this label finish (now, or as soon as it starts). */
  release(label: string): void {
    this.hold(label).release();
  }

  private hold(label: string): Hold {
    let hold = this.holds.get(label);
    if (!hold) {
      hold = newHold();
      this.holds.set(label, hold);
    }
    return hold;
  }
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

/** Rejects once the run is stopped. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.throwIfAborted();
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
