/**
 * A side channel on the SDK client's own transport. The v2 `Client` negotiates the protocol revision, lists
 * tools and answers server requests (elicitation), but it cannot carry task traffic: its
 * 2026-07-28 result decoder refuses `resultType: "task"`, and it removed the 2025-11-25 task
 * methods. So task requests go out as raw JSON-RPC on the same transport (same session,
 * headers and auth), with ids of their own; their responses are taken off the stream before
 * the `Client` sees them. Everything else passes through untouched.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { JsonRpcResponseError, TaskClientError, TaskClientErrorCode } from './errors.js';

type MessageHandler = NonNullable<Transport['onmessage']>;
export type NotificationListener = (method: string, params: Record<string, unknown>) => void;

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

export class RawChannel {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<NotificationListener>();
  /** The `Client`'s sends still on their way (answers to elicitations, among others). */
  private readonly inFlight = new Set<Promise<unknown>>();
  private nextId = 1;
  private closed = false;

  private constructor(private readonly inner: Transport) {}

  /**
   * Wraps `transport`: give the returned proxy to `Client.connect`, and send task requests
   * through the channel. The proxy is the transport itself except for `onmessage`.
   */
  static wrap(transport: Transport): { transport: Transport; channel: RawChannel } {
    const channel = new RawChannel(transport);
    let clientHandler: MessageHandler | undefined;
    const previousOnClose = transport.onclose;
    transport.onmessage = ((message: JSONRPCMessage, extra?: unknown) => {
      if (channel.take(message)) return;
      (clientHandler as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(message, extra);
    }) as MessageHandler;
    const proxy = new Proxy(transport, {
      get(target, property) {
        if (property === 'onmessage') return clientHandler;
        if (property === 'onclose') return (target as { onclose?: unknown }).onclose;
        if (property === 'send')
          return (message: JSONRPCMessage, options?: unknown) => channel.track(target, message, options);
        const value = Reflect.get(target, property, target);
        // Methods run on the real transport: private fields do not survive a proxied `this`.
        return typeof value === 'function' && property !== 'constructor' ? value.bind(target) : value;
      },
      set(target, property, value) {
        if (property === 'onmessage') {
          clientHandler = value as MessageHandler | undefined;
          return true;
        }
        if (property === 'onclose') {
          // Keep failing pending requests when the connection drops, whoever listens too.
          (target as { onclose?: () => void }).onclose = () => {
            channel.fail(new TaskClientError(TaskClientErrorCode.Closed, 'The connection closed'));
            (value as (() => void) | undefined)?.();
          };
          return true;
        }
        return Reflect.set(target, property, value, target);
      },
    });
    if (previousOnClose) proxy.onclose = previousOnClose;
    return { transport: proxy, channel };
  }

  /** Sends one request and resolves with its result, or rejects with its JSON-RPC error. */
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new TaskClientError(TaskClientErrorCode.Closed, 'The connection closed'));
    const id = `mcp-task-client-${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.inner.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch((error: unknown) => {
        if (!this.pending.delete(id)) return;
        reject(fromSendError(error));
      });
    });
  }

  /**
   * Resolves once what the `Client` has sent so far is delivered: an elicitation answer is sent
   * a tick after its handler returns, so callers that are about to exit wait for this.
   */
  async delivered(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.allSettled([...this.inFlight]);
  }

  track(target: Transport, message: JSONRPCMessage, options?: unknown): Promise<void> {
    const sending = target.send(message, options as never);
    this.inFlight.add(sending);
    void sending.finally(() => this.inFlight.delete(sending)).catch(() => {});
    return sending;
  }

  /** Listens to every notification the server sends (also passed on to the `Client`). */
  onNotification(listener: NotificationListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Fails whatever is still waiting; later requests fail at once. */
  fail(error: Error): void {
    this.closed = true;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  /** Handles `message` if it answers one of ours; reports notifications to listeners. */
  private take(message: JSONRPCMessage): boolean {
    const m = message as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    if (typeof m.method === 'string' && m.id === undefined) {
      const params = (m.params ?? {}) as Record<string, unknown>;
      for (const listener of this.listeners) listener(m.method, params);
      return false;
    }
    if (typeof m.id !== 'string' || m.method !== undefined) return false;
    const pending = this.pending.get(m.id);
    if (!pending) return false;
    this.pending.delete(m.id);
    if (m.error) {
      const error = m.error as { code: number; message: string; data?: unknown };
      pending.reject(new JsonRpcResponseError(error.code, error.message, error.data));
    } else pending.resolve((m.result ?? {}) as Record<string, unknown>);
    return true;
  }
}

/** A transport that could not deliver (an HTTP error without a JSON-RPC body, a closed pipe). */
function fromSendError(error: unknown): Error {
  const e = error as { code?: unknown; message?: string; data?: unknown };
  if (typeof e?.code === 'number') return new JsonRpcResponseError(e.code, e.message ?? 'request failed', e.data);
  return error instanceof Error ? error : new Error(String(error));
}
