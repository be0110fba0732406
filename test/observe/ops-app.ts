/**
 * A small app for the observability tests: a task that reports progress until done or
 * cancelled, one that asks a question, one that throws and one whose result breaks its declared
 * type; and `PolicyTools`, one tool per policy (retry and timeout, idempotent creation with a
 * priority, a plain one to fill a principal's share). The manifests are written by hand in the
 * generator's shape, so these tests do not depend on a generation step.
 */
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { HttpAuthOptions } from '../../src/host/http-front.js';
import { NeedsInput, Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool } from '../../src/tools/definition.js';

export interface Approval {
  approve: boolean;
  note?: string;
}

export class OpsTools {
  /** Crawls `pages` pages, one every `pauseMs`, reporting each. */
  @Task({ pollIntervalMs: 100 })
  async crawl(input: { pages: number; pauseMs: number }, ctx: TaskContext): Promise<string> {
    const start = await ctx.step('plan', async () => ({ plannedAt: 'now' }));
    for (let page = 1; page <= input.pages; page++) {
      await sleep(input.pauseMs, ctx.signal);
      ctx.progress({ message: `page ${page} of ${input.pages}`, progress: page, total: input.pages });
    }
    return `crawled ${input.pages} pages (${start.plannedAt})`;
  }

  /** Asks for approval, then reports what was decided. */
  @Task({ pollIntervalMs: 100 })
  @NeedsInput<Approval>('approval', { message: 'Publish the report?' })
  async publish(ctx: TaskContext<{ approval: Approval }>): Promise<string> {
    const answer = await ctx.input('approval');
    if (answer.action !== 'accept') return `not published (${answer.action})`;
    return answer.content.approve ? `published${answer.content.note ? `: ${answer.content.note}` : ''}` : 'kept';
  }

  /** Always throws. */
  @Task({ pollIntervalMs: 100 })
  async explode(): Promise<string> {
    throw new Error('kaboom');
  }

  /** Declares a string, returns a number. */
  @Task({ pollIntervalMs: 100 })
  async lie(): Promise<string> {
    return 42 as unknown as string;
  }
}

const CrawlInput = z.strictObject({ pages: z.int().min(1).max(1000), pauseMs: z.int().min(0).max(10_000) });
const ApprovalAnswer = z.strictObject({ approve: z.boolean(), note: z.string().optional() });
const NoInput = z.strictObject({});

const base = { taskSupport: 'optional' as const, pollIntervalMs: 100, result: 'text' as const };

export const opsManifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<OpsTools, z.output<typeof CrawlInput>>({
      ...base,
      name: 'crawl',
      description: 'Crawls pages, one every pauseMs, reporting each.',
      inputSchema: {
        type: 'object',
        properties: { pages: { type: 'integer', minimum: 1 }, pauseMs: { type: 'integer', minimum: 0 } },
        required: ['pages', 'pauseMs'],
      },
      input: CrawlInput,
      target: { class: OpsTools, method: 'crawl' },
      source: 'test/observe/ops-app.ts:18:3',
      invoke: (target, args, ctx) => target.crawl(args, ctx),
    }),
    defineTaskTool<OpsTools, z.output<typeof NoInput>>({
      ...base,
      name: 'publish',
      description: 'Asks for approval, then publishes.',
      inputSchema: { type: 'object', properties: {} },
      input: NoInput,
      questions: [
        {
          name: 'approval',
          message: 'Publish the report?',
          schema: {
            type: 'object',
            properties: {
              approve: { type: 'boolean', title: 'Approve', description: 'Publish it?' },
              note: { type: 'string', title: 'Note', description: 'A note for the log' },
            },
            required: ['approve'],
          },
          answer: ApprovalAnswer,
        },
      ],
      target: { class: OpsTools, method: 'publish' },
      source: 'test/observe/ops-app.ts:29:3',
      invoke: (target, _args, ctx) => target.publish(ctx),
    }),
    defineTaskTool<OpsTools, z.output<typeof NoInput>>({
      ...base,
      name: 'explode',
      inputSchema: { type: 'object', properties: {} },
      input: NoInput,
      target: { class: OpsTools, method: 'explode' },
      source: 'test/observe/ops-app.ts:38:3',
      invoke: (target) => target.explode(),
    }),
    defineTaskTool<OpsTools, z.output<typeof NoInput>>({
      ...base,
      name: 'lie',
      inputSchema: { type: 'object', properties: {} },
      input: NoInput,
      target: { class: OpsTools, method: 'lie' },
      source: 'test/observe/ops-app.ts:44:3',
      invoke: (target) => target.lie(),
    }),
  ],
});

/** Tools with every policy: for what the logs, the metrics and the dashboard show of them. */
export class PolicyTools {
  /** Hangs on its first attempt (timed out), throws on its second, succeeds on its third. */
  @Task({ retry: { attempts: 3, backoff: 'fixed', delayMs: 50 }, timeoutMs: 300 })
  async flaky(_input: { label: string }, ctx: TaskContext): Promise<string> {
    if (ctx.attempt === 1) await sleep(10_000, ctx.signal);
    if (ctx.attempt === 2) throw new Error('ECONNRESET');
    return `ok on attempt ${ctx.attempt}`;
  }

  /** The same arguments are always the same request; runs before priority-0 work would not. */
  @Task({ idempotent: true, priority: 7 })
  async lookup(input: { term: string }): Promise<string> {
    return `found ${input.term}`;
  }

  /** Holds its slot for `ms`. */
  @Task()
  async hold(input: { ms: number }, ctx: TaskContext): Promise<string> {
    await sleep(input.ms, ctx.signal);
    return 'held';
  }
}

const LabelInput = z.strictObject({ label: z.string() });
const TermInput = z.strictObject({ term: z.string() });
const HoldInput = z.strictObject({ ms: z.int().min(0).max(30_000) });
const policyBase = { taskSupport: 'optional' as const, result: 'text' as const };
export const policyManifest = defineTaskManifest({
  formatVersion: 1,
  tools: [
    defineTaskTool<PolicyTools, z.output<typeof LabelInput>>({
      ...policyBase,
      name: 'flaky',
      retry: { attempts: 3, backoff: 'fixed', delayMs: 50 },
      timeoutMs: 300,
      inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      input: LabelInput,
      target: { class: PolicyTools, method: 'flaky' },
      source: 'test/observe/ops-app.ts:124:3',
      invoke: (target, args, ctx) => target.flaky(args, ctx),
    }),
    defineTaskTool<PolicyTools, z.output<typeof TermInput>>({
      ...policyBase,
      name: 'lookup',
      idempotent: true,
      priority: 7,
      inputSchema: { type: 'object', properties: { term: { type: 'string' } }, required: ['term'] },
      input: TermInput,
      target: { class: PolicyTools, method: 'lookup' },
      source: 'test/observe/ops-app.ts:132:3',
      invoke: (target, args) => target.lookup(args),
    }),
    defineTaskTool<PolicyTools, z.output<typeof HoldInput>>({
      ...policyBase,
      name: 'hold',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
      input: HoldInput,
      target: { class: PolicyTools, method: 'hold' },
      source: 'test/observe/ops-app.ts:138:3',
      invoke: (target, args, ctx) => target.hold(args, ctx),
    }),
  ],
});

/** A logger that keeps every line, to assert on. */
export interface CapturedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly data: Record<string, unknown>;
}

export function captureLogger() {
  const lines: CapturedLine[] = [];
  const write = (level: CapturedLine['level']) => (message: string, data?: Record<string, unknown>) => {
    lines.push({ level, message, data: data ?? {} });
  };
  return {
    lines,
    logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') },
    /** The lifecycle lines of one task, in order. */
    of: (taskId: string) => lines.filter((line) => line.data.taskId === taskId),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Bearer auth where each token stands for one subject (principal `sub:<subject>`). */
export function tokenAuth(tokens: Readonly<Record<string, string>>): HttpAuthOptions {
  return {
    verifier: {
      async verifyAccessToken(token) {
        const subject = tokens[token];
        if (!subject) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown token');
        const expiresAt = Math.floor(Date.now() / 1000) + 3600;
        return { token, clientId: 'ops-test', scopes: ['mcp'], expiresAt, extra: { sub: subject } };
      },
    },
  };
}
