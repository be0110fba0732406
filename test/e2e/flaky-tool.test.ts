/**
 * The policies page's example, end to end: a tool wrapped in `retry` and `timeoutMs` completes
 * against an upstream that fails twice and then hangs once, over a real client, on the
 * in-process runtime and on BullMQ.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { taskManifest } from '../../docs/snippets/policies/__generated__/tasks.generated.js';
import { Mirror, type NotesSource, ReleaseNotes } from '../../docs/snippets/policies/release-notes.js';
import { createTestHarness, type TestHarness } from '../../src/testing/index.js';
import { describeWithRedis, REDIS_URL } from '../bullmq/support.js';

/** Fails twice, hangs (until aborted, as `fetch` does) once, then answers. */
class FlakyUpstream implements NotesSource {
  calls = 0;
  readonly aborts: string[] = [];

  async fetchNotes(repo: string, tag: string, signal: AbortSignal): Promise<string | undefined> {
    this.calls++;
    if (repo === 'acme/missing') return undefined;
    if (this.calls <= 2) throw new Error('ECONNRESET');
    if (this.calls === 3) {
      return new Promise((_resolve, reject) =>
        signal.addEventListener(
          'abort',
          () => {
            this.aborts.push(String((signal.reason as Error).message));
            reject(signal.reason);
          },
          { once: true },
        ),
      );
    }
    return `notes of ${repo}@${tag}`;
  }
}

function scenarios(runtime: 'memory' | 'bullmq'): void {
  let harness: TestHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function serve(upstream: FlakyUpstream): Promise<TestHarness> {
    harness = await createTestHarness(
      { manifest: taskManifest, instances: [new ReleaseNotes(upstream), new Mirror()] },
      { runtime, ...(runtime === 'bullmq' && { redisUrl: REDIS_URL }) },
    );
    return harness;
  }

  it('completes on attempt 4 after two failures and a timeout, saying what it waits for', async () => {
    const upstream = new FlakyUpstream();
    const served = await serve(upstream);
    const call = await served.call('release_notes', { repo: 'acme/api', tag: 'v1.2.0' });
    const messages = new Set<string>();
    const watched = (async () => {
      for await (const event of call.events) {
        if (event.type !== 'status') continue;
        if (event.task.statusMessage) messages.add(event.task.statusMessage);
        if (event.task.status !== 'working') break;
      }
    })();
    const result = await call.result();
    await watched;
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toEqual({ notes: 'notes of acme/api@v1.2.0', attempt: 4 });
    expect(upstream.calls).toBe(4);
    expect(upstream.aborts).toEqual(['timed out after 1 s']);
    // What the task said while it waited, as far as the client's updates caught it.
    const waits = [...messages].filter((message) => message.startsWith('attempt '));
    expect(waits.length).toBeGreaterThan(0);
    for (const message of waits) {
      expect(message).toMatch(/^attempt [234] of 5 in (200|400|800) ms: (ECONNRESET|timed out after 1 s)$/);
    }
  });

  it('fails at once when the release does not exist (NonRetryableError)', async () => {
    const upstream = new FlakyUpstream();
    const served = await serve(upstream);
    const call = await served.call('release_notes', { repo: 'acme/missing', tag: 'v9' });
    const result = await call.result();
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'acme/missing has no release v9' }]);
    expect(upstream.calls).toBe(1);
  });
}

describe('a flaky tool with retry and timeoutMs, in process', () => scenarios('memory'));
describeWithRedis('a flaky tool with retry and timeoutMs, on BullMQ', () => scenarios('bullmq'));
