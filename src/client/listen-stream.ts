/**
 * A 2026-07-28 `subscriptions/listen` for one task over Streamable HTTP, on a request of its own
 * so that it can be closed when the task ends: the SDK transport cannot end one POST's stream,
 * and a stream per task held until the client closes would look like a leak to the server.
 * Every `notifications/tasks` it carries goes to `onNotification`; failures are silent, since
 * polling `tasks/get` stays the floor.
 */
import type { FetchLike } from '@modelcontextprotocol/client';

export interface ListenTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly fetch?: FetchLike;
}

/** Opens the stream; resolves with a function that closes it. */
export function listenForTask(
  target: ListenTarget,
  body: Record<string, unknown>,
  onNotification: (method: string, params: Record<string, unknown>) => void,
): () => void {
  const controller = new AbortController();
  const run = async () => {
    const response = await (target.fetch ?? fetch)(target.url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify(body),
    });
    if (!response.ok || !response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
      await response.body?.cancel();
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = events.pop() ?? '';
      for (const event of events) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (!data) continue;
        const message = JSON.parse(data) as { method?: unknown; params?: unknown };
        if (typeof message.method === 'string')
          onNotification(message.method, (message.params ?? {}) as Record<string, unknown>);
      }
    }
  };
  run().catch(() => {});
  return () => controller.abort();
}
