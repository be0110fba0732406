/**
 * Tools with retry and timeout policies, run through the real `ToolRegistry`: the contract's
 * policy cases prove the tool layer and each runtime together, as an app runs them.
 */
import { z } from 'zod';
import { NonRetryableError, Task, type TaskContext } from '../../src/index.js';
import { defineTaskManifest, defineTaskTool, type TaskToolDefinition } from '../../src/tools/definition.js';
import { ToolRegistry } from '../../src/tools/registry.js';

/** Retry waits in the contract: long enough to watch, short enough for a quick suite. */
export const POLICY_DELAY_MS = 400;
export const POLICY_TIMEOUT_MS = 300;
/** The grace the contract gives a method that ignores its timeout. */
export const POLICY_GRACE_MS = 100;

/** What each task's method saw and did, by task id. */
export class PolicyMethods {
  readonly attempts = new Map<string, number[]>();
  readonly firstStepRuns = new Map<string, number>();
  private readonly hung = new Map<string, () => void>();

  @Task()
  async flaky(input: { failures: number }, ctx: TaskContext): Promise<{ attempt: number; stamp: string }> {
    const id = ctx.taskId as string;
    this.attempts.set(id, [...(this.attempts.get(id) ?? []), ctx.attempt]);
    const stamp = await ctx.step('first', async () => {
      this.firstStepRuns.set(id, (this.firstStepRuns.get(id) ?? 0) + 1);
      return `stamped-${ctx.attempt}`;
    });
    if (ctx.attempt <= input.failures) throw new Error(`ECONNRESET ${ctx.attempt}`);
    return { attempt: ctx.attempt, stamp };
  }

  @Task()
  async refuses(_input: Record<string, never>, ctx: TaskContext): Promise<string> {
    this.attempts.set(ctx.taskId as string, [...(this.attempts.get(ctx.taskId as string) ?? []), ctx.attempt]);
    throw new NonRetryableError('no such repository');
  }

  /** Hangs on the attempts listed, ignoring its signal, until `release`; else answers at once. */
  @Task()
  async hangs(input: { hangOn: number[] }, ctx: TaskContext): Promise<{ attempt: number }> {
    const id = ctx.taskId as string;
    this.attempts.set(id, [...(this.attempts.get(id) ?? []), ctx.attempt]);
    if (input.hangOn.includes(ctx.attempt)) {
      await new Promise<void>((resolve) => this.hung.set(`${id}:${ctx.attempt}`, resolve));
      return { attempt: -ctx.attempt };
    }
    return { attempt: ctx.attempt };
  }

  @Task()
  async quick(): Promise<string> {
    return 'quick';
  }

  /** Lets a hung attempt return (late: its result must be discarded). */
  release(taskId: string, attempt: number): void {
    this.hung.get(`${taskId}:${attempt}`)?.();
  }
}

const Failures = z.strictObject({ failures: z.int() });
const HangOn = z.strictObject({ hangOn: z.array(z.int()) });
const Empty = z.strictObject({});

function tool<Args>(
  name: string,
  input: z.ZodType<Args>,
  options: Pick<TaskToolDefinition, 'retry' | 'timeoutMs'>,
  invoke: TaskToolDefinition<PolicyMethods, Args>['invoke'],
): TaskToolDefinition {
  return defineTaskTool<PolicyMethods, Args>({
    name,
    taskSupport: 'optional',
    inputSchema: { type: 'object' },
    input,
    result: 'json',
    target: { class: PolicyMethods, method: name === 'hangs_once' || name === 'hangs_always' ? 'hangs' : name },
    source: `policy-tools.ts:${name}`,
    invoke,
    ...options,
  });
}

/** The policy tools, over one `PolicyMethods` whose records the test reads. */
export function policyRegistry(methods: PolicyMethods): ToolRegistry {
  const manifest = defineTaskManifest({
    formatVersion: 1,
    tools: [
      tool('flaky', Failures, { retry: { attempts: 3, backoff: 'fixed', delayMs: POLICY_DELAY_MS } }, (t, a, c) =>
        t.flaky(a, c),
      ),
      tool('refuses', Empty, { retry: { attempts: 5, delayMs: POLICY_DELAY_MS } }, (t, a, c) =>
        t.refuses(a as Record<string, never>, c),
      ),
      tool(
        'hangs_once',
        HangOn,
        { timeoutMs: POLICY_TIMEOUT_MS, retry: { attempts: 2, backoff: 'fixed', delayMs: 50 } },
        (t, a, c) => t.hangs(a, c),
      ),
      tool('hangs_always', HangOn, { timeoutMs: POLICY_TIMEOUT_MS }, (t, a, c) => t.hangs(a, c)),
      tool('quick', Empty, {}, (t) => t.quick()),
    ],
  });
  return new ToolRegistry({ manifest, instances: [methods], timeoutGraceMs: POLICY_GRACE_MS });
}
