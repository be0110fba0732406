/**
 * Per-tool concurrency inside one worker process (`TaskExecutor.concurrencyOf`). BullMQ's
 * `concurrency` caps the whole worker; a tool that declares a lower limit waits here for a slot,
 * first come first served. The waiting job keeps its BullMQ slot: simple and fair, at the cost
 * of idling that slot while other tools' jobs queue (size `concurrency` with that in mind).
 */

export type ReleaseSlot = () => void;

export class ToolSlots {
  private readonly active = new Map<string, number>();
  private readonly waiters = new Map<string, (() => void)[]>();

  constructor(private readonly limitOf: (tool: string) => number | undefined) {}

  /** Whether `acquire(tool)` would get a slot at once. */
  hasRoom(tool: string): boolean {
    const limit = this.limitOf(tool);
    return limit === undefined || (this.active.get(tool) ?? 0) < limit;
  }

  /** A slot for `tool`, or `undefined` if `signal` aborted while waiting. */
  async acquire(tool: string, signal: AbortSignal): Promise<ReleaseSlot | undefined> {
    const limit = this.limitOf(tool);
    if (limit === undefined) return () => {};
    while ((this.active.get(tool) ?? 0) >= limit) {
      if (signal.aborted) return undefined;
      await this.waitTurn(tool, signal);
    }
    if (signal.aborted) return undefined;
    this.active.set(tool, (this.active.get(tool) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active.set(tool, (this.active.get(tool) ?? 1) - 1);
      this.waiters.get(tool)?.shift()?.();
    };
  }

  private waitTurn(tool: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const queue = this.waiters.get(tool) ?? [];
      this.waiters.set(tool, queue);
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      // An aborted waiter leaves the line, so it never swallows a wake-up meant for the next one.
      const onAbort = () => {
        const index = queue.indexOf(wake);
        if (index >= 0) queue.splice(index, 1);
        resolve();
      };
      queue.push(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
