/**
 * Idempotent creation and priority through a real server and real clients, on the in-process
 * runtime: the `_meta` key and the `Idempotency-Key` header on both revisions, two principals
 * with the same key, `@Task({ idempotent: true })`, a call's own priority where the tool allows
 * it, and what the logs and `/metrics` say of them. The cross-process race is in
 * `multi-process.test.ts`; the runtimes' atomicity in the contract suite.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';
import { captureLogger, tokenAuth } from '../observe/ops-app.js';
import { connectV1, pollUntil, type RunningServer, rpc2026, startServer } from './support.js';

class PolicyTools {
  readonly started: string[] = [];

  /** Waits `ms`, then says which label ran. */
  @Task({ priority: 5, priorityFromCall: true })
  async wait(input: { label: string; ms: number }, ctx: TaskContext): Promise<string> {
    this.started.push(input.label);
    await new Promise((resolve) => setTimeout(resolve, input.ms));
    ctx.signal.throwIfAborted();
    return `ran ${input.label}`;
  }

  /** The same arguments are always the same request. */
  @Task({ idempotent: true, priority: 7 })
  async lookup(input: { term: string }): Promise<string> {
    this.started.push(`lookup:${input.term}`);
    return `found ${input.term}`;
  }
}

const WaitInput = z.strictObject({ label: z.string(), ms: z.int().min(0).max(10_000) });
const LookupInput = z.strictObject({ term: z.string() });

const manifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<PolicyTools, z.output<typeof WaitInput>>({
      name: 'wait',
      taskSupport: 'optional',
      priority: 5,
      priorityFromCall: true,
      inputSchema: {
        type: 'object',
        properties: { label: { type: 'string' }, ms: { type: 'integer' } },
        required: ['label', 'ms'],
      },
      input: WaitInput,
      result: 'text',
      target: { class: PolicyTools, method: 'wait' },
      source: 'test/e2e/idempotency-priority.test.ts:22:3',
      invoke: (target, args, ctx) => target.wait(args, ctx),
    }),
    defineTaskTool<PolicyTools, z.output<typeof LookupInput>>({
      name: 'lookup',
      taskSupport: 'optional',
      idempotent: true,
      priority: 7,
      inputSchema: { type: 'object', properties: { term: { type: 'string' } }, required: ['term'] },
      input: LookupInput,
      result: 'text',
      target: { class: PolicyTools, method: 'lookup' },
      source: 'test/e2e/idempotency-priority.test.ts:31:3',
      invoke: (target, args) => target.lookup(args),
    }),
  ],
});

const captured = captureLogger();
const tools = new PolicyTools();
let running: RunningServer;
let ann: Client;
let bob: Client;

beforeAll(async () => {
  running = await startServer({
    manifest,
    instances: [tools],
    logger: captured.logger,
    metrics: true,
    workers: 1,
    http: { auth: tokenAuth({ 'token-ann': 'ann', 'token-bob': 'bob' }) },
  });
  ann = await connectV1(running.url, { token: 'token-ann' });
  bob = await connectV1(running.url, { token: 'token-bob' });
});

afterAll(async () => {
  await Promise.allSettled([ann?.close(), bob?.close()]);
  await running?.close();
});

async function create2025(client: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) {
  const reply = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {}, ...(meta && { _meta: meta }) } },
    CreateTaskResultSchema,
  );
  return reply.task.taskId;
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function metric(series: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', running.url))).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('idempotent creation over the wire', () => {
  it('returns the first task for the same _meta key on 2025-11-25 and 2026-07-28, and counts the hits', async () => {
    const key = `k-${randomUUID()}`;
    const args = { label: `meta-${key}`, ms: 0 };
    const meta = { 'mcp-task-server/idempotencyKey': key };
    const before = await metric('mcp_task_idempotent_hits_total{tool="wait"}');
    const taskId = await create2025(ann, 'wait', args, meta);
    expect(await create2025(ann, 'wait', args, meta)).toBe(taskId);
    const modern = await rpc2026(
      running.url,
      'tools/call',
      { name: 'wait', arguments: args, _meta: meta },
      { headers: auth('token-ann') },
    );
    expect(modern.result?.taskId).toBe(taskId);
    const result = await ann.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: `ran ${args.label}` }]);
    expect(tools.started.filter((label) => label === args.label)).toHaveLength(1);
    expect(await metric('mcp_task_idempotent_hits_total{tool="wait"}')).toBe(before + 2);
    const hits = captured.of(taskId).filter((line) => line.data.event === 'idempotent_hit');
    expect(hits).toHaveLength(2);
    expect(hits[0]?.data).toMatchObject({ idempotentHit: true, principal: 'sub:ann' });
    // No line says the key or the arguments.
    expect(JSON.stringify(captured.of(taskId))).not.toContain(key);
  });

  it('reads the Idempotency-Key header on both revisions', async () => {
    const key = `h-${randomUUID()}`;
    const args = { label: `header-${key}`, ms: 0 };
    const first = await rpc2026(
      running.url,
      'tools/call',
      { name: 'wait', arguments: args },
      { headers: { ...auth('token-ann'), 'idempotency-key': key } },
    );
    const taskId = first.result?.taskId as string;
    expect(typeof taskId).toBe('string');
    const legacy = await connectV1(running.url, { token: 'token-ann', headers: { 'Idempotency-Key': key } });
    try {
      expect(await create2025(legacy, 'wait', args)).toBe(taskId);
      // The call's own `_meta` key wins over the header.
      expect(await create2025(legacy, 'wait', args, { 'mcp-task-server/idempotencyKey': `${key}-other` })).not.toBe(
        taskId,
      );
    } finally {
      await legacy.close();
    }
  });

  it('refuses the same key with other arguments (-32030) and a malformed key (-32602)', async () => {
    const key = `c-${randomUUID()}`;
    const meta = { 'mcp-task-server/idempotencyKey': key };
    await create2025(ann, 'wait', { label: 'first', ms: 0 }, meta);
    await expect(create2025(ann, 'wait', { label: 'second', ms: 0 }, meta)).rejects.toMatchObject({
      code: -32030,
      message: expect.stringMatching(/idempotency key was already used/),
    });
    await expect(
      create2025(ann, 'wait', { label: 'x', ms: 0 }, { 'mcp-task-server/idempotencyKey': 'k'.repeat(256) }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/idempotency key.*1 to 255 characters/) });
    expect(tools.started).not.toContain('second');
  });

  it('gives two principals with the same key two tasks, and neither reaches the other', async () => {
    const key = `shared-${randomUUID()}`;
    const meta = { 'mcp-task-server/idempotencyKey': key };
    const args = { label: `two-${key}`, ms: 0 };
    const annsTask = await create2025(ann, 'wait', args, meta);
    const bobsTask = await create2025(bob, 'wait', args, meta);
    expect(bobsTask).not.toBe(annsTask);
    await expect(bob.experimental.tasks.getTask(annsTask)).rejects.toMatchObject({ code: -32602 });
    // Other arguments under Ann's key are no conflict for Bob: his key is his own.
    const bobsOther = await rpc2026(
      running.url,
      'tools/call',
      { name: 'wait', arguments: { label: 'bob-other', ms: 0 }, _meta: meta },
      { headers: auth('token-bob') },
    );
    expect(bobsOther.error).toMatchObject({ code: -32030 });
    const annsAgain = await rpc2026(
      running.url,
      'tools/call',
      { name: 'wait', arguments: args, _meta: meta },
      { headers: auth('token-ann') },
    );
    expect(annsAgain.result?.taskId).toBe(annsTask);
  });

  it('derives the key of an idempotent tool from its arguments, per principal', async () => {
    const term = `t-${randomUUID()}`;
    const first = await create2025(ann, 'lookup', { term });
    expect(await create2025(ann, 'lookup', { term })).toBe(first);
    expect(await create2025(bob, 'lookup', { term })).not.toBe(first);
    await pollUntil(
      async () => tools.started.filter((label) => label === `lookup:${term}`).length,
      (runs) => runs === 2,
    );
  });
});

describe('priority over the wire', () => {
  it("takes the call's priority where the tool allows it, the tool's otherwise, and logs it", async () => {
    const fromCall = await create2025(ann, 'wait', { label: 'p-call', ms: 0 }, { 'mcp-task-server/priority': 2 });
    const fromTool = await create2025(ann, 'wait', { label: 'p-tool', ms: 0 });
    // `lookup` does not let calls choose: the `_meta` priority is ignored.
    const ignored = await create2025(ann, 'lookup', { term: `p-${randomUUID()}` }, { 'mcp-task-server/priority': 1 });
    const priorityOf = (taskId: string) =>
      captured.of(taskId).find((line) => line.data.event === 'created')?.data.priority;
    expect(priorityOf(fromCall)).toBe(2);
    expect(priorityOf(fromTool)).toBe(5);
    expect(priorityOf(ignored)).toBe(7);
    await expect(
      create2025(ann, 'wait', { label: 'p-bad', ms: 0 }, { 'mcp-task-server/priority': 1001 }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/mcp-task-server\/priority/) });
  });

  it('starts waiting tasks by priority on the one worker slot', async () => {
    const blocker = await create2025(ann, 'wait', { label: 'order-blocker', ms: 300 });
    await pollUntil(
      async () => tools.started,
      (started) => started.includes('order-blocker'),
    );
    const ids: string[] = [];
    for (const priority of [9, 0, 4]) {
      ids.push(
        await create2025(ann, 'wait', { label: `order-${priority}`, ms: 0 }, { 'mcp-task-server/priority': priority }),
      );
    }
    for (const taskId of [blocker, ...ids]) await ann.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(tools.started.filter((label) => label.startsWith('order-'))).toEqual([
      'order-blocker',
      'order-0',
      'order-4',
      'order-9',
    ]);
  });
});
