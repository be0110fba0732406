/**
 * Record-change events across processes. Every record write publishes `{ record }`
 * (see record-store.ts); each runtime instance holds one subscriber connection and fans the
 * messages out to its listeners. Nothing polls.
 *
 * Ordering: messages arrive in the order Redis ran the writes, so a listener never sees an
 * older version after a newer one. What pub/sub cannot give is replay: messages published
 * while the subscriber is disconnected are lost (ioredis re-subscribes on reconnect). Readers
 * that wait for a state (the engine's `waitFor`) subscribe first and then read the record,
 * which covers every change after the read, and read again when told of a gap.
 */

import type { TaskEvent, TaskListener } from '../../engine/runtime.js';
import type { Logger } from '../../tools/logger.js';
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

export class TaskEventStream {
  private readonly listeners = new Set<TaskListener>();
  private readonly gapListeners = new Set<() => void>();
  private readonly subscription: RedisChannelSubscription;

  constructor(subscriber: RedisClient, channel: string, logger: Logger) {
    // After a reconnect, messages published while the connection was down are gone. Once the
    // channel is subscribed again, tell the waiters so they re-read what they wait for.
    let connectedBefore = false;
    subscriber.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      subscriber.subscribe(channel).then(
        () => this.emitGap(),
        (error: unknown) => logger.warn('Could not subscribe to task events again', { error: String(error) }),
      );
    });
    this.subscription = new RedisChannelSubscription(subscriber, channel, (message) => {
      // Nobody in this process listens: skip parsing a record nobody will read.
      if (this.listeners.size === 0) return;
      const event = decodeTaskEvent(message);
      if (!event) {
        logger.warn('Ignored a malformed task event', { channel });
        return;
      }
      this.emit(event);
    });
  }

  get ready(): Promise<void> {
    return this.subscription.ready;
  }

  subscribe(listener: TaskListener, onGap?: () => void): () => void {
    this.listeners.add(listener);
    if (onGap) this.gapListeners.add(onGap);
    return () => {
      this.listeners.delete(listener);
      if (onGap) this.gapListeners.delete(onGap);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.gapListeners.clear();
    await this.subscription.close();
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
