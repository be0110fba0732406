import { JsonRpcError, Task, type TaskContext, Tool } from 'mcp-task-server';

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

  /** Fails with a JSON-RPC error instead of a tool result. */
  @Task({ pollIntervalMs: 200 })
  async protocolErrorJob(ctx: TaskContext): Promise<string> {
    await sleep(200, ctx.signal);
    throw new JsonRpcError(-32603, 'The job hit a protocol error on purpose', { reason: 'simulated' });
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
