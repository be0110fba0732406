/**
 * Review probe: a task tool that needs a client capability refuses a caller without tasks that
 * did not declare it, as it refuses a task-aware caller (-32021), instead of starting the task.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { Task } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import { connectV1, type RunningServer, rpc2026, startServer, WITH_TASKS } from './support.js';

class Sampler {
  readonly ran: string[] = [];
  @Task({ pollIntervalMs: 100 })
  async summarize(label: string): Promise<string> {
    this.ran.push(label);
    return `summarized ${label}`;
  }
}

const Input = z.strictObject({ label: z.string() });
const manifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<Sampler, z.output<typeof Input>>({
      name: 'summarize',
      taskSupport: 'optional',
      requiresClientCapabilities: ['sampling'],
      pollIntervalMs: 100,
      result: 'text',
      inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      input: Input,
      target: { class: Sampler, method: 'summarize' },
      source: 'test/e2e/review-probes-5.test.ts:13:3',
      invoke: (target, args) => target.summarize(args.label),
    }),
  ],
});

const sampler = new Sampler();
let running: RunningServer;
beforeAll(async () => {
  running = await startServer({ manifest, instances: [sampler] });
});
afterAll(() => running?.close());

it('2026-07-28: -32021 with or without the tasks extension', async () => {
  const aware = await rpc2026(
    running.url,
    'tools/call',
    { name: 'summarize', arguments: { label: 'aware' } },
    { capabilities: WITH_TASKS },
  );
  expect(aware.error?.code).toBe(-32021);
  const unaware = await rpc2026(
    running.url,
    'tools/call',
    { name: 'summarize', arguments: { label: 'unaware' } },
    { capabilities: {} },
  );
  expect(unaware.error?.code, JSON.stringify(unaware.result)).toBe(-32021);
  expect(sampler.ran).toEqual([]);
});

it('2025-11-25: a session without tasks is refused like one with them', async () => {
  const client = await connectV1(running.url, {});
  const outcome = await client.callTool({ name: 'summarize', arguments: { label: 'legacy' } }).then(
    (result) => ({ result }),
    (error: { code: number }) => ({ code: error.code }),
  );
  expect(outcome).toEqual({ code: -32021 });
  await client.close();
});
