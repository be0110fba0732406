/**
 * Turns a running method's progress reports into `statusMessage` writes. `report` is
 * synchronous for the method, so writes happen in the background: one at a time (a slow early
 * write can never land after a later one) and coalesced (a burst of reports costs one write
 * of the latest message, not one per report).
 */
import type { Logger } from '../../tools/logger.js';
import type { RedisTaskStore } from './record-store.js';
import { progressChange } from './status-mapping.js';

export class ProgressWriter {
  private latest: string | undefined;
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: RedisTaskStore,
    private readonly taskId: string,
    private readonly logger: Logger,
  ) {}

  report(message: string): void {
    this.latest = message;
    if (this.scheduled) return;
    this.scheduled = true;
    this.writing = this.writing.then(() => this.writeLatest());
  }

  /** Resolves once every reported message is written, so the outcome is written after them. */
  flush(): Promise<void> {
    return this.writing;
  }

  private async writeLatest(): Promise<void> {
    this.scheduled = false;
    const message = this.latest as string;
    try {
      // Progress only annotates a working task; it must not touch one that ended or waits for input.
      await this.store.update(this.taskId, (current) =>
        current.status === 'working' && current.statusMessage !== message ? progressChange(message) : undefined,
      );
    } catch (error) {
      this.logger.warn('Could not store a progress message', { taskId: this.taskId, error: String(error) });
    }
  }
}
