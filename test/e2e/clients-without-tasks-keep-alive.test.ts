/**
 * The keep-alive progress of an inline call of a caller without tasks stops for good when the
 * call ends, even if the tool reports progress afterwards (a tool that says "cleaning up" when
 * its client hangs up).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import { pollUntil, type RunningServer, startServer } from './support.js';

const KEEP_ALIVE_MS = 37;

class Lingerer {
  readonly ended: string[] = [];
  @Task({ pollIntervalMs: 100 })
  async linger(label: string, ctx: TaskContext): Promise<string> {
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    // Cleaning up after the hang-up takes a moment, and says so.
    await new Promise((resolve) => setTimeout(resolve, 50));
    ctx.progress('cleaning up');
    this.ended.push(label);
    return `stopped ${label}`;
  }
}

const Input = z.strictObject({ label: z.string() });
const manifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<Lingerer, z.output<typeof Input>>({
      name: 'linger',
      taskSupport: 'optional',
      pollIntervalMs: 100,
      result: 'text',
      inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      input: Input,
      target: { class: Lingerer, method: 'linger' },
      source: 'test/e2e/clients-without-tasks-keep-alive.test.ts:16:3',
      invoke: (target, args, ctx) => target.linger(args.label, ctx),
    }),
  ],
});

const lingerer = new Lingerer();
let running: RunningServer;
beforeAll(async () => {
  running = await startServer({
    manifest,
    instances: [lingerer],
    unawareClients: { mode: 'inline', keepAliveMs: KEEP_ALIVE_MS },
  });
});
afterAll(() => running?.close());

it('no keep-alive timer outlives an inline call whose tool reports progress after the hang-up', async () => {
  const timeouts = vi.spyOn(globalThis, 'setTimeout');
  const keepAlives = () => timeouts.mock.calls.filter(([, ms]) => ms === KEEP_ALIVE_MS).length;
  const controller = new AbortController();
  const sent = fetch(running.url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'linger',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'linger',
        arguments: { label: 'a' },
        _meta: {
          progressToken: 'p1',
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  }).then((response) => response.text());
  await new Promise((resolve) => setTimeout(resolve, 200));
  controller.abort();
  await sent.catch(() => {});
  await pollUntil(
    async () => lingerer.ended,
    (ended) => ended.includes('a'),
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  const settled = keepAlives();
  // The call had its keep-alive while it ran (so the test can see one rearm).
  expect(settled).toBeGreaterThan(0);
  await new Promise((resolve) => setTimeout(resolve, 20 * KEEP_ALIVE_MS));
  const later = keepAlives();
  timeouts.mockRestore();
  // About 20 more would mean a keep-alive timer that rearms itself forever.
  expect(later - settled).toBe(0);
});
