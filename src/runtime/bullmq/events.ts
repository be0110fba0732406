/**
 * Record-change events across processes. Every record write publishes `{ record }`
 * (see record-store.ts); each runtime instance holds one subscriber connection and, while it
 * has listeners, fans the messages out to them. Nothing polls.
 *
 * Ordering: messages arrive in the order Redis ran the writes, so a listener never sees an
 * older version after a newer one. What pub/sub cannot give is replay: messages published
 * while the subscriber is disconnected are lost (ioredis re-subscribes on reconnect). Readers
 * that wait for a state (the engine's `waitFor`) subscribe first and then read the record,
 * which covers every change after the read, and read again when told of a gap.
 */

import type { TaskEvent, TaskListener } from '../../engine/runtime.js';
import type { Logger } from '../../observe/logger.js';
import type { RedisClient } from './connection.js';

/** One channel on a dedicated subscriber connection. */
export class RedisChannelSubscription {
  /** Settles once Redis confirmed the subscription; messages before that are not ours to see. */
  readonly ready: Promise<void>;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    onMessage: (message: string) => void,
  ) {
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) onMessage(message);
    });
    this.ready = subscriber.subscribe(channel).then(() => undefined);
    // A failure is reported to whoever awaits `ready`; never as an unhandled rejection.
    this.ready.catch(() => {});
  }

  async close(): Promise<void> {
    if (this.subscriber.status === 'ready') await this.subscriber.unsubscribe(this.channel).catch(() => {});
  }
}

/** How long the channel stays subscribed after its last listener left: waits come and go. */
const UNSUBSCRIBE_AFTER_MS = 2000;

/**
 * The events channel, subscribed only while something in this process listens (a follower, a
 * dashboard): a server whose clients poll receives no event traffic at all, and Redis does not
 * send it.
 */
export class TaskEventStream {
  private readonly listeners = new Set<TaskListener>();
  private readonly gapListeners = new Set<() => void>();
  /** Settles once Redis confirmed the subscription; `undefined` while unsubscribed. */
  private subscribed: Promise<void> | undefined;
  private unsubscribeTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    logger: Logger,
  ) {
    // After a reconnect, messages published while the connection was down are gone. Once the
    // channel is subscribed again, tell the waiters so they re-read what they wait for.
    let connectedBefore = false;
    subscriber.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      if (!this.subscribed) return;
      subscriber.subscribe(channel).then(
        () => this.emitGap(),
        (error: unknown) => logger.warn('Could not subscribe to task events again', { error: String(error) }),
      );
    });
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel || this.listeners.size === 0) return;
      const event = decodeTaskEvent(message);
      if (!event) {
        logger.warn('Ignored a malformed task event', { channel });
        return;
      }
      this.emit(event);
    });
  }

  /**
   * Settles once every listener added so far hears every change from now on: what a caller
   * that subscribes and then reads awaits before reading.
   */
  get ready(): Promise<void> {
    return this.subscribed ?? Promise.resolve();
  }

  subscribe(listener: TaskListener, onGap?: () => void): () => void {
    this.listeners.add(listener);
    if (onGap) this.gapListeners.add(onGap);
    clearTimeout(this.unsubscribeTimer);
    if (!this.subscribed && !this.closed) {
      const subscribed = this.subscriber.subscribe(this.channel).then(() => undefined);
      this.subscribed = subscribed;
      // A failed subscription fails the reads that await it; the next listener tries again.
      subscribed.catch(() => {
        if (this.subscribed === subscribed) this.subscribed = undefined;
      });
    }
    return () => {
      this.listeners.delete(listener);
      if (onGap) this.gapListeners.delete(onGap);
      if (this.listeners.size === 0) {
        clearTimeout(this.unsubscribeTimer);
        this.unsubscribeTimer = setTimeout(() => this.unsubscribeIfIdle(), UNSUBSCRIBE_AFTER_MS).unref();
      }
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.unsubscribeTimer);
    this.listeners.clear();
    this.gapListeners.clear();
    await this.unsubscribeIfIdle();
  }

  /** Commands on one connection run in order, so a subscribe sent after this one wins. */
  private async unsubscribeIfIdle(): Promise<void> {
    if (this.listeners.size > 0 || !this.subscribed) return;
    this.subscribed = undefined;
    if (this.subscriber.status === 'ready') await this.subscriber.unsubscribe(this.channel).catch(() => {});
  }

  private emitGap(): void {
    for (const onGap of this.gapListeners) {
      try {
        onGap();
      } catch {
        // As for listeners: one failure must not stop the others.
      }
    }
  }

  private emit(event: TaskEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not break the runtime or the other listeners.
      }
    }
  }
}

export function decodeTaskEvent(message: string): TaskEvent | undefined {
  try {
    const decoded = JSON.parse(message) as Partial<TaskEvent>;
    if (!decoded.record || typeof decoded.record.taskId !== 'string') return undefined;
    return { record: decoded.record };
  } catch {
    return undefined;
  }
}
