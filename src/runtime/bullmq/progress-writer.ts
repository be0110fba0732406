/**
 * Turns a running method's progress reports into `statusMessage` writes. `report` is
 * synchronous for the method, so writes happen in the background: one at a time (a slow early
 * write can never land after a later one) and coalesced (a burst of reports costs one write
 * of the latest message, not one per report).
 */
import { type ProgressUpdate, progressReportChange } from '../../engine/runtime.js';
import type { Logger } from '../../observe/logger.js';
import type { RedisTaskStore, StoredRecord } from './record-store.js';

export class ProgressWriter {
  private latest: ProgressUpdate = {};
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: RedisTaskStore,
    private readonly taskId: string,
    private readonly logger: Logger,
    /** Told of each version written, so the run writes its outcome against the newest. */
    private readonly onWritten: (written: StoredRecord | undefined) => void = () => {},
  ) {}

  report(update: ProgressUpdate): void {
    // Merged, so a report of numbers only does not drop an unwritten message, and vice versa.
    this.latest = { ...this.latest, ...update };
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
    const update = this.latest;
    this.latest = {};
    try {
      this.onWritten(await this.store.update(this.taskId, (current) => progressReportChange(current, update)));
    } catch (error) {
      this.logger.warn('Could not store a progress message', { taskId: this.taskId, error: String(error) });
    }
  }
}
