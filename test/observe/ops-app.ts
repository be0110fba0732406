/**
 * A small app for the observability tests: a task that reports progress until done or
 * cancelled, one that asks a question, one that throws and one whose result breaks its declared
 * type. The manifest is written by hand in the generator's shape, so these tests do not depend
 * on a generation step.
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
