/**
 * The contract every `TaskRuntime` passes. Each runtime's test file calls
 * `describeRuntimeContract` with a factory; the cases below never look inside a runtime.
 *
 * The executor here is a small scripted stand-in for user code (tools that finish, fail,
 * report progress or wait for cancellation); the runtime under test is always the real one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type CallbackCheck, type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { AnswerCheck } from '../../src/engine/inputs.js';
import type { TaskPolicy } from '../../src/engine/policy.js';
import type { ExecutionControl, TaskEvent, TaskExecutor, TaskRuntime } from '../../src/engine/runtime.js';
import type { PendingInput, TaskOutcome, TaskRecord } from '../../src/engine/task.js';
import { POLICY_GRACE_MS, POLICY_TIMEOUT_MS, PolicyMethods, policyRegistry } from './policy-tools.js';

export interface RuntimeUnderTest {
  readonly runtime: TaskRuntime;
  /**
   * The runtime spreads tasks over shards (BullMQ with several): each shard's queue is ordered
   * on its own, so priority order is not promised between tasks of different shards, and a
   * client-chosen id keeps its idempotency key on its own shard.
   */
  readonly sharded?: boolean;
  /**
   * Whether the runtime's storage still holds an index entry for the callback token: the one
   * look inside a runtime, for the cases that check a gone task leaves no token behind.
   */
  callbackTokenStored(token: string): Promise<boolean>;
  /** Releases everything the factory made (queues, keys, connections). */
  dispose(): Promise<void>;
}

export type RuntimeFactory = (executor: TaskExecutor, options: { concurrency: number }) => Promise<RuntimeUnderTest>;

const ALICE: Caller = { principal: 'alice' };
const BOB: Caller = { principal: 'bob' };

/** Scripted tools: `args.script` says what the "method" does. */
export class ScriptedExecutor implements TaskExecutor {
  readonly started: string[] = [];
  readonly aborted: string[] = [];
  private readonly releases = new Map<string, () => void>();

  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    this.started.push(record.taskId);
    const { script, text = 'done' } = record.args as { script: string; text?: string };
    control.signal.addEventListener('abort', () => this.aborted.push(record.taskId), { once: true });
    switch (script) {
      case 'finish':
        return ok(text);
      case 'tool-error':
        return { kind: 'result', result: { content: [{ type: 'text', text }], isError: true }, isError: true };
      case 'rpc-error':
        return { kind: 'error', error: { code: -32603, message: text } };
      case 'progress-then-wait':
        control.report({ message: text, progress: 1, total: 3 });
        await this.until(record.taskId, control.signal);
        return ok('released');
      case 'wait':
        await this.until(record.taskId, control.signal);
        return ok('released');
      case 'hold': {
        // Counts its owner's runs at once, for the fair-share cases; ends when released.
        const owner = record.owner ?? '';
        const now = (this.runningNow.get(owner) ?? 0) + 1;
        this.runningNow.set(owner, now);
        this.mostAtOnce.set(owner, Math.max(now, this.mostAtOnce.get(owner) ?? 0));
        this.held.add(record.taskId);
        try {
          await this.until(record.taskId, control.signal);
        } finally {
          this.held.delete(record.taskId);
          this.runningNow.set(owner, (this.runningNow.get(owner) ?? 1) - 1);
        }
        return ok('released');
      }
      case 'ignore-cancel':
        // A method that does not stop when asked and finishes anyway.
        await new Promise<void>((resolve) => this.releases.set(record.taskId, resolve));
        return ok('finished after cancel');
      case 'ask': {
        // A side effect before the question, memoised so it happens once however often the method runs.
        const stamped = await control.step('stamp', async () => this.sideEffect(record.taskId));
        const answer = await control.ask('colour', question('colour', 'Which colour?'));
        return ok(`${stamped}:${answer.action}:${String(answer.content?.value ?? '')}`);
      }
      case 'ask-both': {
        const [first, second] = await Promise.all([
          control.ask('first', question('first', 'First?')),
          control.ask('second', question('second', 'Second?')),
        ]);
        return ok(`${String(first.content?.value)}+${String(second.content?.value)}`);
      }
      case 'ask-in-turn': {
        const first = await control.ask('first', question('first', 'First?'));
        const second = await control.ask('second', question('second', 'Second?'));
        return ok(`${String(first.content?.value)}>${String(second.content?.value)}`);
      }
      case 'sleep': {
        // A side effect, a sleep, and a second sleep already over by its replay: the effect
        // and the sleeps happen once however often the method runs.
        const { ms = 400 } = record.args as { ms?: number };
        const stamped = await control.step('stamp', async () => this.sideEffect(record.taskId));
        if (!control.sleep) throw new Error('this runtime has no sleep');
        try {
          await control.sleep('sleep', ms);
        } catch (error) {
          if (error instanceof RangeError) return ok(`refused: ${error.message}`);
          throw error;
        }
        this.woke.set(record.taskId, (this.woke.get(record.taskId) ?? 0) + 1);
        return ok(`${stamped}:slept`);
      }
      case 'callback': {
        // A side effect before the hook, memoised; the hook itself must come back the same on a replay.
        const stamped = await control.step('stamp', async () => this.sideEffect(record.taskId));
        if (!control.callback) throw new Error('this runtime offers no callbacks');
        const { timeoutMs } = record.args as { timeoutMs?: number };
        const hook = await control.callback('ci', { name: 'ci', ...(timeoutMs !== undefined && { timeoutMs }) });
        this.tokens.set(record.taskId, [...(this.tokens.get(record.taskId) ?? []), hook.token]);
        const result = await hook.wait();
        const payload = result.status === 'received' ? JSON.stringify(result.payload) : '';
        return ok(`${stamped}:${result.status}:${payload}`);
      }
      default:
        throw new Error(`unknown script ${script}`);
    }
  }

  /** `hold` runs going on now, and the most at once, per owner ('' for anonymous). */
  readonly runningNow = new Map<string, number>();
  readonly mostAtOnce = new Map<string, number>();
  /** `hold` runs waiting for `releaseHeld`. */
  readonly held = new Set<string>();

  /** Ends every `hold` run going on now. */
  releaseHeld(): void {
    for (const taskId of [...this.held]) {
      this.held.delete(taskId);
      this.release(taskId);
    }
  }

  /** Runs of `sleep` that got past the sleep, per task. */
  readonly woke = new Map<string, number>();
  /** The callback token each run of a task got, in order (a replay must get the same). */
  readonly tokens = new Map<string, string[]>();

  /** Side effects run, per task: the contract asks for exactly one each. */
  readonly sideEffects = new Map<string, number>();

  private async sideEffect(taskId: string): Promise<string> {
    const count = (this.sideEffects.get(taskId) ?? 0) + 1;
    this.sideEffects.set(taskId, count);
    return `effect-${count}`;
  }

  release(taskId: string): void {
    this.releases.get(taskId)?.();
  }

  private until(taskId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      this.releases.set(taskId, resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
}

function question(name: string, message: string): PendingInput {
  return {
    question: name,
    params: { mode: 'form', message, requestedSchema: { type: 'object', properties: { value: { type: 'string' } } } },
  };
}

/** Accepts callback payloads whose `value` is a string, naming the field otherwise. */
const stringPayloads = (_tool: string, _name: string, payload: unknown): CallbackCheck =>
  typeof (payload as { value?: unknown } | null)?.value === 'string'
    ? { ok: true, payload }
    : { ok: false, problem: 'value: expected a string' };

/** Accepts answers whose `value` is a string; anything else is refused with a reason. */
const stringValues: AnswerCheck = (_pending, answer) =>
  answer.action !== 'accept' || typeof answer.content?.value === 'string' ? undefined : 'value must be a string';

function ok(text: string): TaskOutcome {
  return { kind: 'result', result: { content: [{ type: 'text', text }] }, isError: false };
}

/**
 * Every version of every task from now on, heard through the engine's events. A state a task
 * only passes through (a retry's note lasts one back-off: 400 ms) is then seen however late the
 * test looks, where a `waitFor` that starts after the state has passed (a follower's first read
 * on a loaded machine can come that late) waits for ever. Make it before the create: the
 * runtime's create waits for the subscription.
 */
function passingStates(engine: TaskEngine) {
  const seen: TaskRecord[] = [];
  const unsubscribe = engine.subscribe((event) => seen.push(event.record));
  const match = (taskId: string, accept: (record: TaskRecord) => boolean) =>
    seen.find((record) => record.taskId === taskId && accept(record));
  return {
    /** The first version of `taskId` that `accept` takes (within 10 s); stops listening. */
    async first(taskId: string, accept: (record: TaskRecord) => boolean): Promise<TaskRecord> {
      try {
        await waitUntil(() => match(taskId, accept) !== undefined, 10_000);
        return match(taskId, accept) as TaskRecord;
      } finally {
        unsubscribe();
      }
    },
  };
}

/** Resolves once `check` holds (tried every 20 ms, for at most 10 s). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error('the condition never held');
}

export function describeRuntimeContract(name: string, factory: RuntimeFactory): void {
  describe(`TaskRuntime contract: ${name}`, () => {
    let current: RuntimeUnderTest | undefined;
    let executor: ScriptedExecutor;

    async function setUp(concurrency = 8, policy: Partial<TaskPolicy> = {}): Promise<TaskEngine> {
      executor = new ScriptedExecutor();
      current = await factory(executor, { concurrency });
      return new TaskEngine({ runtime: current.runtime, pageSize: 2, policy });
    }

    afterEach(async () => {
      await current?.dispose();
      current = undefined;
    });

    /** The engine over the runtime with the policy tools of `policy-tools.ts` as its executor. */
    async function setUpPolicies(concurrency = 8): Promise<{ engine: TaskEngine; methods: PolicyMethods }> {
      const methods = new PolicyMethods();
      current = await factory(policyRegistry(methods), { concurrency });
      return { engine: new TaskEngine({ runtime: current.runtime, pageSize: 2 }), methods };
    }

    describe('retries and timeouts', () => {
      it('retries a method that fails twice: it completes on attempt 3, its first step ran once', async () => {
        const { engine, methods } = await setUpPolicies();
        const states = passingStates(engine);
        const created = await engine.create(ALICE, { tool: 'flaky', args: { failures: 2 } });
        // While the retry waits the task is working and says what comes next, when and why.
        const waiting = await states.first(created.taskId, (r) => r.statusMessage?.startsWith('attempt 2') ?? false);
        expect(waiting.status).toBe('working');
        expect(waiting.statusMessage).toBe('attempt 2 of 3 in 400 ms: ECONNRESET 1');
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(done.status).toBe('completed');
        expect(done.outcome).toMatchObject({
          kind: 'result',
          isError: false,
          result: { content: [{ type: 'text', text: JSON.stringify({ attempt: 3, stamp: 'stamped-1' }) }] },
        });
        expect(methods.attempts.get(created.taskId)).toEqual([1, 2, 3]);
        expect(methods.firstStepRuns.get(created.taskId)).toBe(1);
      });

      it('fails the task once the attempts are spent, with the last error', async () => {
        const { engine, methods } = await setUpPolicies();
        const created = await engine.create(ALICE, { tool: 'flaky', args: { failures: 5 } });
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(done.outcome).toMatchObject({ kind: 'result', isError: true });
        expect(done.statusMessage).toBe('ECONNRESET 3');
        expect(methods.attempts.get(created.taskId)).toEqual([1, 2, 3]);
      });

      it('ends the task at once on a NonRetryableError', async () => {
        const { engine, methods } = await setUpPolicies();
        const created = await engine.create(ALICE, { tool: 'refuses', args: {} });
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(done.outcome).toMatchObject({ kind: 'result', isError: true });
        expect(done.statusMessage).toBe('no such repository');
        expect(methods.attempts.get(created.taskId)).toEqual([1]);
      });

      it('holds no slot during a back-off: another task runs meanwhile', async () => {
        const { engine } = await setUpPolicies(1);
        const states = passingStates(engine);
        const flaky = await engine.create(ALICE, { tool: 'flaky', args: { failures: 1 } });
        await states.first(flaky.taskId, (r) => r.statusMessage?.startsWith('attempt 2') ?? false);
        const quick = await engine.create(BOB, { tool: 'quick', args: {} });
        expect((await engine.waitForTerminal(BOB, quick.taskId)).status).toBe('completed');
        // The quick task ended while the flaky one still waited for its second attempt.
        expect((await engine.get(ALICE, flaky.taskId)).outcome).toBeUndefined();
        expect((await engine.waitForTerminal(ALICE, flaky.taskId)).status).toBe('completed');
      });

      it('cancels a task during its back-off: it never runs again', async () => {
        const { engine, methods } = await setUpPolicies();
        const states = passingStates(engine);
        const created = await engine.create(ALICE, { tool: 'flaky', args: { failures: 1 } });
        await states.first(created.taskId, (r) => r.statusMessage?.startsWith('attempt 2') ?? false);
        expect((await engine.cancel(ALICE, created.taskId)).status).toBe('cancelled');
        await sleep(600);
        expect((await engine.get(ALICE, created.taskId)).status).toBe('cancelled');
        expect(methods.attempts.get(created.taskId)).toEqual([1]);
      });

      it('abandons an attempt that ignores its timeout: the slot frees, the retry completes, the late return is discarded', async () => {
        const { engine, methods } = await setUpPolicies(1);
        const started = Date.now();
        const created = await engine.create(ALICE, { tool: 'hangs_once', args: { hangOn: [1] } });
        // Another task gets the only slot while attempt 1 still hangs.
        const quick = await engine.create(BOB, { tool: 'quick', args: {} });
        expect((await engine.waitForTerminal(BOB, quick.taskId)).status).toBe('completed');
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(Date.now() - started).toBeGreaterThanOrEqual(POLICY_TIMEOUT_MS + POLICY_GRACE_MS);
        expect(done.status).toBe('completed');
        const second = { content: [{ type: 'text', text: JSON.stringify({ attempt: 2 }) }] };
        expect(done.outcome).toMatchObject({ kind: 'result', isError: false, result: second });
        expect(methods.attempts.get(created.taskId)).toEqual([1, 2]);
        // Attempt 1 returns at last: nothing changes.
        methods.release(created.taskId, 1);
        await sleep(100);
        expect((await engine.get(ALICE, created.taskId)).outcome).toMatchObject({ result: second });
      });

      it('fails a task whose only attempt times out, naming the timeout', async () => {
        const { engine, methods } = await setUpPolicies(1);
        const created = await engine.create(ALICE, { tool: 'hangs_always', args: { hangOn: [1] } });
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(done.status).toBe('failed');
        expect(done.outcome).toMatchObject({
          kind: 'error',
          error: { message: 'hangs_always timed out after 300 ms' },
        });
        // The slot is free again.
        const quick = await engine.create(ALICE, { tool: 'quick', args: {} });
        expect((await engine.waitForTerminal(ALICE, quick.taskId)).status).toBe('completed');
        methods.release(created.taskId, 1);
      });
    });

    describe('sleeps', () => {
      it('sleeps working with "sleeping until <ISO time>", then completes; the step before ran once', async () => {
        const engine = await setUp();
        const created = await engine.create(ALICE, { tool: 't', args: { script: 'sleep', ms: 500 } });
        const asleep = await engine.waitFor(
          ALICE,
          created.taskId,
          (r) => r.statusMessage?.startsWith('sleeping') ?? false,
        );
        expect(asleep.status).toBe('working');
        const until = asleep.sleeps?.sleep as number;
        expect(asleep.statusMessage).toBe(`sleeping until ${new Date(until).toISOString()}`);
        expect(until).toBeGreaterThanOrEqual(created.createdAt + 500);
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        expect(done.status).toBe('completed');
        expect(done.outcome).toMatchObject({ result: { content: [{ type: 'text', text: 'effect-1:slept' }] } });
        expect(done.lastUpdatedAt).toBeGreaterThanOrEqual(until);
        // Steps are replayed, not redone; the sleep ended once; the wake time is kept.
        expect(executor.sideEffects.get(created.taskId)).toBe(1);
        expect(executor.woke.get(created.taskId)).toBe(1);
        expect(done.sleeps).toEqual({ sleep: until });
      });

      it('holds no slot while it sleeps: another task runs meanwhile', async () => {
        const engine = await setUp(1);
        const sleeper = await engine.create(ALICE, { tool: 't', args: { script: 'sleep', ms: 1500 } });
        await engine.waitFor(ALICE, sleeper.taskId, (r) => r.statusMessage?.startsWith('sleeping') ?? false);
        const quick = await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
        expect((await engine.waitForTerminal(BOB, quick.taskId)).status).toBe('completed');
        // The quick task ended while the sleeper still slept.
        expect((await engine.get(ALICE, sleeper.taskId)).status).toBe('working');
        expect((await engine.waitForTerminal(ALICE, sleeper.taskId)).status).toBe('completed');
      });

      it('cancels a sleeping task at once: it never runs again, and the other principal cannot', async () => {
        const engine = await setUp();
        const created = await engine.create(ALICE, { tool: 't', args: { script: 'sleep', ms: 600 } });
        await engine.waitFor(ALICE, created.taskId, (r) => r.statusMessage?.startsWith('sleeping') ?? false);
        await expect(engine.cancel(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
        await expect(engine.get(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
        const runs = executor.started.filter((id) => id === created.taskId).length;
        // Counted as parked for a sleep while it sleeps (a short wait: BullMQ counts after the move).
        await waitUntilAsync(async () => (await current?.runtime.stats?.())?.parked?.sleep === 1);
        const cancelled = await engine.cancel(ALICE, created.taskId);
        expect(cancelled.status).toBe('cancelled');
        expect((await current?.runtime.stats?.())?.parked?.sleep).toBe(0);
        // Past the wake time: nothing ran, nothing changed.
        await sleep(1000);
        expect((await engine.get(ALICE, created.taskId)).status).toBe('cancelled');
        expect(executor.started.filter((id) => id === created.taskId).length).toBe(runs);
        expect(executor.woke.get(created.taskId)).toBeUndefined();
      });

      it("refuses a sleep past the task's TTL at the call, naming the sleep's end and the expiry", async () => {
        const engine = await setUp();
        const created = await engine.create(ALICE, {
          tool: 't',
          args: { script: 'sleep', ms: 120_000 },
          requestedTtlMs: 60_000,
        });
        const done = await engine.waitForTerminal(ALICE, created.taskId);
        const text =
          (done.outcome as unknown as { result: { content: { text: string }[] } }).result.content[0]?.text ?? '';
        const expiry = new Date(created.createdAt + 60_000).toISOString();
        expect(text).toMatch(
          /^refused: ctx\.sleep\('sleep'\) of 2 min would end at \d{4}-.*Z, after the task expires at /,
        );
        expect(text).toContain(expiry);
        expect(text).toContain('TTL is 60 s');
        expect(done.sleeps).toBeUndefined();
      });
    });

    it('finds a task right after create returns (durable create)', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      const read = await engine.get(ALICE, created.taskId);
      expect(read.taskId).toBe(created.taskId);
      expect(read.status === 'working' || read.status === 'completed').toBe(true);
      expect(read.createdAt).toBe(created.createdAt);
      expect(read.ttlMs).toBe(created.ttlMs);
      executor.release(created.taskId);
    });

    it('runs the task and stores its result; waiting is event-driven', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish', text: 'hello' } });
      const done = await engine.waitForTerminal(ALICE, created.taskId);
      expect(done.status).toBe('completed');
      expect(done.outcome).toEqual({
        kind: 'result',
        result: { content: [{ type: 'text', text: 'hello' }] },
        isError: false,
      });
      expect(done.lastUpdatedAt).toBeGreaterThanOrEqual(done.createdAt);
      expect((await engine.get(ALICE, created.taskId)).status).toBe('completed');
    });

    it('keeps a tool error as a completed result flagged isError', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'tool-error', text: 'bad input' } });
      const done = await engine.waitForTerminal(ALICE, created.taskId);
      expect(done.status).toBe('completed');
      expect(done.outcome).toMatchObject({ kind: 'result', isError: true });
      expect(done.statusMessage).toBe('bad input');
    });

    it('fails the task with the JSON-RPC error the work raised', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'rpc-error', text: 'upstream down' } });
      const done = await engine.waitForTerminal(ALICE, created.taskId);
      expect(done.status).toBe('failed');
      expect(done.outcome).toEqual({ kind: 'error', error: { code: -32603, message: 'upstream down' } });
      expect(done.statusMessage).toBe('upstream down');
    });

    it('turns progress into statusMessage while the task works', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, {
        tool: 't',
        args: { script: 'progress-then-wait', text: 'step 1 of 3' },
      });
      const reported = await engine.waitFor(ALICE, created.taskId, (r) => r.statusMessage === 'step 1 of 3');
      expect(reported.status).toBe('working');
      expect(reported.progress).toEqual({ progress: 1, total: 3 });
      executor.release(created.taskId);
      expect((await engine.waitForTerminal(ALICE, created.taskId)).status).toBe('completed');
    });

    it('cancels a running task before answering, aborts its signal, and stays cancelled', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'ignore-cancel' } });
      await waitUntil(() => executor.started.includes(created.taskId));
      const cancelled = await engine.cancel(ALICE, created.taskId);
      expect(cancelled.status).toBe('cancelled');
      expect((await engine.get(ALICE, created.taskId)).status).toBe('cancelled');
      await waitUntil(() => executor.aborted.includes(created.taskId));
      // The method finishes anyway: terminal is sticky.
      executor.release(created.taskId);
      await sleep(100);
      const after = await engine.get(ALICE, created.taskId);
      expect(after.status).toBe('cancelled');
      expect(after.outcome).toBeUndefined();
    });

    it('removes a queued task on cancel without ever running it', async () => {
      const engine = await setUp(1);
      const blocker = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      await waitUntil(() => executor.started.includes(blocker.taskId));
      const queued = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      expect((await engine.cancel(ALICE, queued.taskId)).status).toBe('cancelled');
      executor.release(blocker.taskId);
      await engine.waitForTerminal(ALICE, blocker.taskId);
      await sleep(100);
      expect(executor.started).not.toContain(queued.taskId);
      expect((await engine.get(ALICE, queued.taskId)).status).toBe('cancelled');
    });

    it('refuses a client-chosen id the caller uses already, leaving the first task alone', async () => {
      const engine = await setUp();
      const first = await engine.createWithId(ALICE, 'client-chosen-1', { tool: 't', args: { script: 'wait' } });
      await expect(
        engine.createWithId(ALICE, 'client-chosen-1', { tool: 't', args: { script: 'finish' } }),
      ).rejects.toMatchObject({ code: 'DUPLICATE_TASK' });
      const still = await engine.get(ALICE, first.taskId);
      expect(still.owner).toBe('alice');
      expect(still.status).toBe('working');
      executor.release(first.taskId);
    });

    it("keeps client-chosen ids in each caller's namespace: the same id names two tasks", async () => {
      const engine = await setUp();
      const alices = await engine.createWithId(ALICE, 'shared-name', { tool: 't', args: { script: 'wait' } });
      const bobs = await engine.createWithId(BOB, 'shared-name', { tool: 't', args: { script: 'finish' } });
      expect(bobs.taskId).not.toBe(alices.taskId);
      expect(bobs.clientTaskId).toBe('shared-name');
      expect((await engine.waitForTerminal(BOB, bobs.taskId)).status).toBe('completed');
      expect((await engine.get(ALICE, alices.taskId)).status).toBe('working');
      await expect(engine.get(BOB, alices.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      executor.release(alices.taskId);
    });

    it('starts waiting tasks by priority on one worker slot, lower first, equal ones in creation order', async () => {
      const engine = await setUp(1);
      const blocker = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      await waitUntil(() => executor.started.includes(blocker.taskId));
      const waiting: { priority: number; taskId: string }[] = [];
      for (const priority of [5, 1, 0, 3, 1, 900]) {
        const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish' }, toolPriority: priority });
        expect(created.priority ?? 0).toBe(priority);
        waiting.push({ priority, taskId: created.taskId });
      }
      executor.release(blocker.taskId);
      for (const { taskId } of waiting) await engine.waitForTerminal(ALICE, taskId);
      const order = executor.started.slice(1);
      expect([...order].sort()).toEqual(waiting.map((task) => task.taskId).sort());
      if (current?.sharded) return;
      const expected = [...waiting].sort((a, b) => a.priority - b.priority).map((task) => task.taskId);
      expect(order).toEqual(expected);
    });

    it("records the version of the task's tool, and keeps it to the end", async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish' }, toolVersion: '3' });
      expect(created.toolVersion).toBe('3');
      const done = await engine.waitForTerminal(ALICE, created.taskId);
      expect(done).toMatchObject({ status: 'completed', toolVersion: '3' });
      // Another principal learns nothing of it, its version included.
      await expect(engine.get(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      const unversioned = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      expect((await engine.waitForTerminal(ALICE, unversioned.taskId)).toolVersion).toBeUndefined();
    });

    it("takes a call's own priority only when the tool allows it, and bounds it", async () => {
      const engine = await setUp();
      const allowed = await engine.create(ALICE, {
        tool: 't',
        args: { script: 'finish' },
        toolPriority: 5,
        requestedPriority: 2,
        priorityFromCall: true,
      });
      expect(allowed.priority).toBe(2);
      const ignored = await engine.create(ALICE, {
        tool: 't',
        args: { script: 'finish' },
        toolPriority: 5,
        requestedPriority: 2,
      });
      expect(ignored.priority).toBe(5);
      for (const requestedPriority of [-1, 1001, 1.5, '3']) {
        await expect(
          engine.create(ALICE, { tool: 't', args: { script: 'finish' }, requestedPriority, priorityFromCall: true }),
        ).rejects.toMatchObject({
          code: 'INVALID_PRIORITY',
          message: expect.stringMatching(/mcp-task-server\/priority/),
        });
      }
    });

    describe('idempotent creation', () => {
      it('returns the first task, as it is now, for a repeat with the same key, and runs it once', async () => {
        const engine = await setUp();
        const request = { tool: 't', args: { script: 'finish', text: 'once' }, idempotencyKey: 'order-17' };
        const first = await engine.create(ALICE, request);
        await engine.waitForTerminal(ALICE, first.taskId);
        const again = await engine.create(ALICE, { ...request, args: { text: 'once', script: 'finish' } });
        expect(again.taskId).toBe(first.taskId);
        expect(again.status).toBe('completed');
        await sleep(100);
        expect(executor.started.filter((id) => id === first.taskId)).toHaveLength(1);
        expect(executor.started).toHaveLength(1);
      });

      it('makes one task of concurrent repeats', async () => {
        const engine = await setUp();
        const request = { tool: 't', args: { script: 'wait' }, idempotencyKey: 'racing' };
        const created = await Promise.all(Array.from({ length: 8 }, () => engine.create(ALICE, request)));
        expect(new Set(created.map((record) => record.taskId)).size).toBe(1);
        const taskId = created[0]?.taskId as string;
        await waitUntil(() => executor.started.includes(taskId));
        await sleep(100);
        expect(executor.started).toEqual([taskId]);
        executor.release(taskId);
      });

      it('refuses the same key with other arguments or for another tool, leaving the first task alone', async () => {
        const engine = await setUp();
        const first = await engine.create(ALICE, { tool: 't', args: { script: 'wait' }, idempotencyKey: 'k1' });
        await expect(
          engine.create(ALICE, { tool: 't', args: { script: 'finish' }, idempotencyKey: 'k1' }),
        ).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
        // Another tool with the same key is another request: its own task.
        const other = await engine.create(ALICE, { tool: 'u', args: { script: 'finish' }, idempotencyKey: 'k1' });
        expect(other.taskId).not.toBe(first.taskId);
        expect((await engine.get(ALICE, first.taskId)).status).toBe('working');
        executor.release(first.taskId);
      });

      it("keeps each principal's keys apart: the same key gives two principals two tasks", async () => {
        const engine = await setUp();
        const alices = await engine.create(ALICE, { tool: 't', args: { script: 'wait' }, idempotencyKey: 'shared' });
        const bobs = await engine.create(BOB, { tool: 't', args: { script: 'wait' }, idempotencyKey: 'shared' });
        expect(bobs.taskId).not.toBe(alices.taskId);
        expect(bobs.owner).toBe('bob');
        await expect(engine.get(BOB, alices.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
        executor.release(alices.taskId);
        executor.release(bobs.taskId);
      });

      it('derives the key from the canonical arguments of an idempotent tool', async () => {
        const engine = await setUp();
        const first = await engine.create(ALICE, { tool: 't', args: { script: 'wait', text: 'a' }, idempotent: true });
        const same = await engine.create(ALICE, { tool: 't', args: { text: 'a', script: 'wait' }, idempotent: true });
        const other = await engine.create(ALICE, { tool: 't', args: { script: 'wait', text: 'b' }, idempotent: true });
        expect(same.taskId).toBe(first.taskId);
        expect(other.taskId).not.toBe(first.taskId);
        executor.release(first.taskId);
        executor.release(other.taskId);
      });

      it('treats a client-chosen id repeated with its key as a repeat, and a new id under a held key too', async () => {
        const engine = await setUp();
        const request = { tool: 't', args: { script: 'wait' }, idempotencyKey: 'sep' };
        const first = await engine.createWithId(ALICE, 'chosen-1', request);
        expect((await engine.createWithId(ALICE, 'chosen-1', request)).taskId).toBe(first.taskId);
        // Without the key the same id is still a duplicate.
        await expect(
          engine.createWithId(ALICE, 'chosen-1', { tool: 't', args: { script: 'wait' } }),
        ).rejects.toMatchObject({ code: 'DUPLICATE_TASK' });
        if (!current?.sharded) {
          // Another id under the held key: the first task (on one shard, where the claim lives).
          const again = await engine.createWithId(ALICE, 'chosen-2', request);
          expect(again.taskId).toBe(first.taskId);
          expect(again.clientTaskId).toBe('chosen-1');
        }
        await sleep(50);
        expect(executor.started).toEqual([first.taskId]);
        executor.release(first.taskId);
      });

      it('answers a repeat with its first task even when the caller is at its live-task quota', async () => {
        const engine = await setUp(8, { maxLiveTasksPerOwner: 2 });
        const request = { tool: 't', args: { script: 'finish' }, idempotencyKey: 'at-quota' };
        const first = await engine.create(ALICE, request);
        await engine.waitForTerminal(ALICE, first.taskId);
        const busy = [
          await engine.create(ALICE, { tool: 't', args: { script: 'wait' } }),
          await engine.create(ALICE, { tool: 't', args: { script: 'wait' } }),
        ];
        expect((await engine.create(ALICE, request)).taskId).toBe(first.taskId);
        await expect(engine.create(ALICE, { ...request, idempotencyKey: 'new' })).rejects.toMatchObject({
          code: 'LIMIT_EXCEEDED',
        });
        for (const task of busy) {
          await waitUntil(() => executor.started.includes(task.taskId));
          executor.release(task.taskId);
        }
      });

      it('creates a new task once the window has passed', async () => {
        // Two seconds, not less: the repeat must land inside the window on a loaded machine too.
        const engine = await setUp(8, { idempotencyWindowMs: 2000 });
        const request = { tool: 't', args: { script: 'finish' }, idempotencyKey: 'windowed' };
        const first = await engine.create(ALICE, request);
        expect((await engine.create(ALICE, request)).taskId).toBe(first.taskId);
        await sleep(first.createdAt + 2000 - Date.now() + 100);
        const later = await engine.create(ALICE, request);
        expect(later.taskId).not.toBe(first.taskId);
        // The first task is still kept (its TTL is longer than the window).
        expect((await engine.get(ALICE, first.taskId)).status).toBe('completed');
      });

      it('refuses a key that is too long or holds spaces, naming the field', async () => {
        const engine = await setUp();
        for (const idempotencyKey of ['x'.repeat(256), 'has space', '', 42]) {
          await expect(
            engine.create(ALICE, { tool: 't', args: { script: 'finish' }, idempotencyKey }),
          ).rejects.toMatchObject({
            code: 'INVALID_IDEMPOTENCY_KEY',
            message: expect.stringMatching(/idempotency key/),
          });
        }
        expect(executor.started).toEqual([]);
      });
    });

    it('runs a task whose client-chosen id is all digits', async () => {
      const engine = await setUp();
      const created = await engine.createWithId(ALICE, '12345', { tool: 't', args: { script: 'finish' } });
      expect((await engine.waitForTerminal(ALICE, created.taskId)).status).toBe('completed');
    });

    it('refuses a create over the live-task quota, counts an ended task out, and keeps others serving', async () => {
      const engine = await setUp(8, { maxLiveTasksPerOwner: 2 });
      const first = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      const second = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      await expect(engine.create(ALICE, { tool: 't', args: { script: 'finish' } })).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
        limit: 'maxLiveTasksPerPrincipal',
        value: 2,
        message: expect.stringMatching(/limit is 2 \(maxLiveTasksPerPrincipal\)/),
      });
      await expect(
        engine.createWithId(ALICE, 'over-quota', { tool: 't', args: { script: 'finish' } }),
      ).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
      // Another caller is not affected, and nothing accepted was dropped.
      const bobs = await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
      expect((await engine.waitForTerminal(BOB, bobs.taskId)).status).toBe('completed');
      expect((await engine.get(ALICE, second.taskId)).status).toBe('working');
      await waitUntil(() => executor.started.includes(first.taskId));
      executor.release(first.taskId);
      await engine.waitForTerminal(ALICE, first.taskId);
      const third = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      expect((await engine.waitForTerminal(ALICE, third.taskId)).status).toBe('completed');
      await engine.cancel(ALICE, second.taskId);
      const fourth = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      expect((await engine.waitForTerminal(ALICE, fourth.taskId)).status).toBe('completed');
    });

    it('deletes a task at once, stopping its work', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      await waitUntil(() => executor.started.includes(created.taskId));
      await engine.delete(ALICE, created.taskId);
      await expect(engine.get(ALICE, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      await waitUntil(() => executor.aborted.includes(created.taskId));
      expect((await engine.list(ALICE)).tasks.map((t) => t.taskId)).not.toContain(created.taskId);
      await expect(engine.delete(ALICE, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    });

    it('refuses to cancel a task that already ended', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      await engine.waitForTerminal(ALICE, created.taskId);
      await expect(engine.cancel(ALICE, created.taskId)).rejects.toMatchObject({ code: 'TASK_TERMINAL' });
    });

    it('hides a task from other principals as if it did not exist', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
      await expect(engine.get(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      await expect(engine.cancel(BOB, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      await expect(engine.get({ principal: null }, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      expect((await engine.list(BOB)).tasks).toEqual([]);
      executor.release(created.taskId);
    });

    it('lets anyone holding the id read a task created without a principal', async () => {
      const engine = await setUp();
      const created = await engine.create({ principal: null }, { tool: 't', args: { script: 'finish' } });
      expect((await engine.get({ principal: null }, created.taskId)).taskId).toBe(created.taskId);
    });

    it("lists only the owner's tasks, ordered by creation time, each once, with opaque cursors", async () => {
      const engine = await setUp();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await engine.create(ALICE, { tool: 't', args: { script: 'finish' } })).taskId);
      await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
      const seen: TaskRecord[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await engine.list(ALICE, cursor);
        seen.push(...page.tasks);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined && pages < 10);
      expect(seen.map((t) => t.taskId).sort()).toEqual([...ids].sort());
      expect(seen.map((t) => t.createdAt)).toEqual(seen.map((t) => t.createdAt).sort((a, b) => a - b));
      expect(pages).toBe(3);
      await expect(engine.list(ALICE, 'not-a-cursor')).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    });

    it('forgets a task once its TTL, measured from creation, has passed; a shorter TTL is raised to the floor', async () => {
      const engine = await setUp();
      // 300 ms is below the floor (1 s): both runtimes give the same TTL, so the create never
      // races its own expiry and the task lives long enough to be read after it ends.
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish' }, requestedTtlMs: 300 });
      expect(created.ttlMs).toBe(engine.policy.minTtlMs);
      await engine.waitForTerminal(ALICE, created.taskId);
      expect((await engine.get(ALICE, created.taskId)).status).toBe('completed');
      await sleep(created.createdAt + (created.ttlMs as number) - Date.now() + 150);
      await expect(engine.get(ALICE, created.taskId)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
      expect((await engine.list(ALICE)).tasks.map((t) => t.taskId)).not.toContain(created.taskId);
    });

    it('answers a waiter with "not found" when the task expires before it ends, and keeps no waiter', async () => {
      const engine = await setUp();
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'wait' }, requestedTtlMs: 1000 });
      const waiting = engine.waitForTerminal(ALICE, created.taskId);
      expect(engine.waiterStats().waiters).toBe(1);
      // The TTL is 1 s; the waiter must hear well before a generous bound (it hung for ever before).
      const outcome = await Promise.race([
        waiting.then(
          () => 'ended',
          (error: { code?: string }) => error.code,
        ),
        sleep(10_000).then(() => 'still waiting'),
      ]);
      expect(outcome).toBe('TASK_NOT_FOUND');
      expect(engine.waiterStats()).toEqual({ waiters: 0, followers: 0, followedTasks: 0 });
      executor.release(created.taskId);
    });

    describe('questions', () => {
      const waitingFor = (engine: TaskEngine, taskId: string, keys: string[]) =>
        engine.waitFor(
          ALICE,
          taskId,
          (r) =>
            Object.keys(r.inputRequests ?? {})
              .sort()
              .join() === keys.join(),
        );

      it('waits in input_required with the question, and completes with the answer', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask' } });
        const waiting = await waitingFor(engine, task.taskId, ['colour']);
        expect(waiting.status).toBe('input_required');
        expect(waiting.statusMessage).toBe('Which colour?');
        expect(waiting.inputRequests?.colour?.params).toMatchObject({ message: 'Which colour?' });
        const outcome = await engine.answer(
          ALICE,
          task.taskId,
          { colour: { action: 'accept', content: { value: 'red' } } },
          stringValues,
        );
        expect(outcome.accepted).toEqual(['colour']);
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'effect-1:accept:red' }] } });
        expect(done.inputRequests).toBeUndefined();
        expect(executor.sideEffects.get(task.taskId)).toBe(1);
      });

      it('hands a decline to the method as a decline', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask' } });
        await waitingFor(engine, task.taskId, ['colour']);
        await engine.answer(ALICE, task.taskId, { colour: { action: 'decline' } }, stringValues);
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'effect-1:decline:' }] } });
      });

      it('keeps two questions asked together outstanding until both are answered', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask-both' } });
        await waitingFor(engine, task.taskId, ['first', 'second']);
        await engine.answer(ALICE, task.taskId, { first: { action: 'accept', content: { value: 'a' } } }, stringValues);
        const partial = await engine.get(ALICE, task.taskId);
        expect(partial.status).toBe('input_required');
        expect(Object.keys(partial.inputRequests ?? {})).toEqual(['second']);
        await engine.answer(
          ALICE,
          task.taskId,
          { second: { action: 'accept', content: { value: 'b' } } },
          stringValues,
        );
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'a+b' }] } });
      });

      it('asks questions in turn, each once', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask-in-turn' } });
        await waitingFor(engine, task.taskId, ['first']);
        await engine.answer(ALICE, task.taskId, { first: { action: 'accept', content: { value: '1' } } }, stringValues);
        await waitingFor(engine, task.taskId, ['second']);
        await engine.answer(
          ALICE,
          task.taskId,
          { second: { action: 'accept', content: { value: '2' } } },
          stringValues,
        );
        expect((await engine.waitForTerminal(ALICE, task.taskId)).outcome).toMatchObject({
          result: { content: [{ text: '1>2' }] },
        });
      });

      it('refuses an invalid answer with the reason and keeps the question; ignores unknown keys', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask' } });
        await waitingFor(engine, task.taskId, ['colour']);
        const refused = await engine.answer(
          ALICE,
          task.taskId,
          { colour: { action: 'accept', content: { value: 42 } }, ghost: { action: 'accept', content: {} } },
          stringValues,
        );
        expect(refused).toMatchObject({ accepted: [], rejected: { colour: 'value must be a string' } });
        const still = await engine.get(ALICE, task.taskId);
        expect(still.status).toBe('input_required');
        expect(still.statusMessage).toMatch(/'colour' was not accepted: value must be a string/);
        expect(Object.keys(still.inputRequests ?? {})).toEqual(['colour']);
        await engine.answer(
          ALICE,
          task.taskId,
          { colour: { action: 'accept', content: { value: 'blue' } } },
          stringValues,
        );
        expect((await engine.waitForTerminal(ALICE, task.taskId)).status).toBe('completed');
        // A key already answered is not outstanding any more: a second answer is ignored.
        const late = await engine.answer(
          ALICE,
          task.taskId,
          { colour: { action: 'accept', content: { value: 'x' } } },
          stringValues,
        );
        expect(late.accepted).toEqual([]);
      });

      it('withdraws the questions of a task cancelled while it waits', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'ask' } });
        await waitingFor(engine, task.taskId, ['colour']);
        const cancelled = await engine.cancel(ALICE, task.taskId);
        expect(cancelled.status).toBe('cancelled');
        expect(cancelled.inputRequests).toBeUndefined();
        await sleep(100);
        expect((await engine.get(ALICE, task.taskId)).status).toBe('cancelled');
      });
    });

    describe('callbacks', () => {
      /** The task's hook token once the method made it and parked on it. */
      const parkedOnCallback = async (engine: TaskEngine, taskId: string): Promise<string> => {
        const waiting = await engine.waitFor(ALICE, taskId, (r) => r.statusMessage === 'waiting for callback ci');
        expect(waiting.status).toBe('working');
        const token = executor.tokens.get(taskId)?.[0];
        if (!token) throw new Error('no token');
        return token;
      };

      it('parks working on "waiting for callback ci", takes one payload, and replays the same hook', async () => {
        const engine = await setUp(1);
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback' } });
        const token = await parkedOnCallback(engine, task.taskId);
        // Counted as parked for a callback (the mcp_task_parked_tasks gauge), once it let go of its slot.
        const runtime = current?.runtime as TaskRuntime;
        await until(async () => (await runtime.stats?.())?.parked?.callback === 1);
        // The run holds no slot meanwhile: another task runs on the only one.
        const other = await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
        expect((await engine.waitForTerminal(BOB, other.taskId)).status).toBe('completed');
        expect(await engine.deliverCallback(token, { value: 'green' }, stringPayloads)).toMatchObject({
          status: 'received',
          name: 'ci',
          task: { taskId: task.taskId },
        });
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'effect-1:received:{"value":"green"}' }] } });
        expect((await runtime.stats?.())?.parked?.callback).toBe(0);
        expect(done.callbacks?.ci).toMatchObject({ name: 'ci', status: 'received', payload: { value: 'green' } });
        // Every run of the method (one in place, or one per replay) got the same hook.
        const tokens = executor.tokens.get(task.taskId) ?? [];
        expect(new Set(tokens)).toEqual(new Set([token]));
        expect(executor.sideEffects.get(task.taskId)).toBe(1);
        // Single use: a second POST changes nothing.
        expect((await engine.deliverCallback(token, { value: 'red' }, stringPayloads)).status).toBe('ended');
      });

      it('refuses a payload that does not fit, keeps waiting, then refuses a second payload as used', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback', timeoutMs: 60_000 } });
        const token = await parkedOnCallback(engine, task.taskId);
        expect(await engine.deliverCallback(token, { value: 42 }, stringPayloads)).toMatchObject({
          status: 'invalid',
          problem: 'value: expected a string',
        });
        const still = await engine.get(ALICE, task.taskId);
        expect(still.status).toBe('working');
        expect(still.callbacks?.ci?.status).toBe('waiting');
        expect((await engine.deliverCallback(token, { value: 'ok' }, stringPayloads)).status).toBe('received');
        // Whether the run has ended yet or not, the hook took its one payload.
        const second = await engine.deliverCallback(token, { value: 'again' }, stringPayloads);
        expect(['used', 'ended']).toContain(second.status);
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'effect-1:received:{"value":"ok"}' }] } });
      });

      it('knows no unknown token, and voids the tokens of a cancelled task', async () => {
        const engine = await setUp();
        expect((await engine.deliverCallback('A'.repeat(32), { value: 'x' }, stringPayloads)).status).toBe('unknown');
        expect((await engine.deliverCallback('not a token', { value: 'x' }, stringPayloads)).status).toBe('unknown');
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback' } });
        const token = await parkedOnCallback(engine, task.taskId);
        await engine.cancel(ALICE, task.taskId);
        expect((await engine.deliverCallback(token, { value: 'x' }, stringPayloads)).status).toBe('ended');
        await sleep(100);
        const after = await engine.get(ALICE, task.taskId);
        expect(after.status).toBe('cancelled');
        expect(after.callbacks?.ci?.status).toBe('waiting');
      });

      it('forgets the token of a deleted task: nothing stored, and unknown', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback' } });
        const token = await parkedOnCallback(engine, task.taskId);
        const under = current as RuntimeUnderTest;
        expect(await under.callbackTokenStored(token)).toBe(true);
        await engine.delete(ALICE, task.taskId);
        expect(await under.callbackTokenStored(token)).toBe(false);
        expect((await engine.deliverCallback(token, { value: 'x' }, stringPayloads)).status).toBe('unknown');
      });

      it('forgets the token of a task that expired before its first TTL (keepAlive): nothing stored, and unknown', async () => {
        const engine = await setUp();
        // Unlimited until it ends, then kept 300 ms: the record goes long before any TTL the hook was indexed with.
        const task = await engine.createWithId(ALICE, 'kept-briefly', {
          tool: 't',
          args: { script: 'callback' },
          keepAliveMs: 300,
        });
        const token = await parkedOnCallback(engine, task.taskId);
        expect((await engine.deliverCallback(token, { value: 'green' }, stringPayloads)).status).toBe('received');
        expect((await engine.waitForTerminal(ALICE, task.taskId)).status).toBe('completed');
        await until(async () => (await current?.runtime.get(task.taskId)) === undefined);
        expect(await (current as RuntimeUnderTest).callbackTokenStored(token)).toBe(false);
        expect((await engine.deliverCallback(token, { value: 'x' }, stringPayloads)).status).toBe('unknown');
      });

      it('wakes the method with timed_out at its timeout, and refuses a POST after it', async () => {
        const engine = await setUp();
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback', timeoutMs: 400 } });
        const token = await parkedOnCallback(engine, task.taskId);
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.outcome).toMatchObject({ result: { content: [{ text: 'effect-1:timed_out:' }] } });
        expect(done.callbacks?.ci?.status).toBe('timed_out');
        expect((await engine.deliverCallback(token, { value: 'late' }, stringPayloads)).status).toBe('ended');
      });

      it('refuses a timeout past the task TTL at the call, naming both', async () => {
        const engine = await setUp(8, { defaultTtlMs: 60_000 });
        const task = await engine.create(ALICE, { tool: 't', args: { script: 'callback', timeoutMs: 3_600_000 } });
        const done = await engine.waitForTerminal(ALICE, task.taskId);
        expect(done.status).toBe('failed');
        expect(JSON.stringify(done.outcome)).toMatch(
          /timeoutMs 3600000 ends after the task expires \(its TTL is 60000 ms/,
        );
        expect(done.callbacks).toBeUndefined();
      });
    });

    describe('fair shares between principals', () => {
      const shareMessage = (running: number) => `queued (${running} running for this caller)`;

      it("starts another principal's task while a flood of 300 waits, running at most the share at once", async () => {
        const engine = await setUp(8, { maxRunningTasksPerOwner: 2 });
        const flood: string[] = [];
        for (let batch = 0; batch < 300; batch += 50) {
          const created = await Promise.all(
            Array.from({ length: 50 }, () => engine.create(ALICE, { tool: 't', args: { script: 'hold' } })),
          );
          flood.push(...created.map((task) => task.taskId));
        }
        const bobs = await engine.create(BOB, { tool: 't', args: { script: 'hold' } });
        // A liveness bound, not a speed target: on a loaded machine (CPU busy loops beside a
        // 3-master cluster) parking 300 jobs ahead of Bob's took over 30 s.
        await waitUntil(() => executor.started.includes(bobs.taskId), 60_000);
        expect(executor.runningNow.get('alice')).toBe(2);
        const waiting = flood.find((taskId) => !executor.started.includes(taskId)) as string;
        const told = await engine.waitFor(ALICE, waiting, (r) => r.statusMessage === shareMessage(2));
        expect(told.status).toBe('working');
        executor.release(bobs.taskId);
        // Nothing is dropped: each release lets the next of Alice's tasks start. (Counted from
        // the executor: reading all 300 records after every release was 45,000 reads, most of
        // the case's time on a loaded cluster.)
        const deadline = Date.now() + 90_000;
        while (executor.started.length < flood.length + 1 || executor.held.size > 0) {
          if (Date.now() > deadline) throw new Error(`only ${executor.started.length - 1} of Alice's tasks started`);
          await waitUntil(() => executor.held.size > 0, 30_000);
          executor.releaseHeld();
          await sleep(5);
        }
        await waitUntilAsync(
          async () =>
            (await Promise.all(flood.map((taskId) => engine.get(ALICE, taskId)))).every(
              (r) => r.status === 'completed',
            ),
          30_000,
        );
        expect(executor.mostAtOnce.get('alice')).toBe(2);
        expect(executor.mostAtOnce.get('bob')).toBe(1);
      }, 180_000);

      it("starts a waiting task when one of its principal's runs ends: completion, failure, cancel or park", async () => {
        const engine = await setUp(8, { maxRunningTasksPerOwner: 1 });
        const first = await engine.create(ALICE, { tool: 't', args: { script: 'wait' } });
        await waitUntil(() => executor.started.includes(first.taskId));
        const failing = await engine.create(ALICE, { tool: 't', args: { script: 'rpc-error', text: 'boom' } });
        expect((await engine.waitFor(ALICE, failing.taskId, (r) => r.statusMessage === shareMessage(1))).status).toBe(
          'working',
        );
        await engine.cancel(ALICE, first.taskId);
        expect((await engine.waitForTerminal(ALICE, failing.taskId)).status).toBe('failed');
        const asking = await engine.create(ALICE, { tool: 't', args: { script: 'ask' } });
        await engine.waitFor(ALICE, asking.taskId, (r) => r.status === 'input_required');
        // The question holds no share: the next task runs while it waits for the answer.
        const after = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
        expect((await engine.waitForTerminal(ALICE, after.taskId)).status).toBe('completed');
        await engine.answer(
          ALICE,
          asking.taskId,
          { colour: { action: 'accept', content: { value: 'red' } } },
          stringValues,
        );
        expect((await engine.waitForTerminal(ALICE, asking.taskId)).status).toBe('completed');
        const last = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
        expect((await engine.waitForTerminal(ALICE, last.taskId)).status).toBe('completed');
      });

      it("counts only the caller's own runs, and its wait reveals nothing of another principal's tasks", async () => {
        const engine = await setUp(8, { maxRunningTasksPerOwner: 1 });
        const alices = await Promise.all(
          [0, 1, 2].map(() => engine.create(ALICE, { tool: 't', args: { script: 'hold' } })),
        );
        const bobsFirst = await engine.create(BOB, { tool: 't', args: { script: 'hold' } });
        await waitUntil(() => executor.started.includes(bobsFirst.taskId));
        const bobsSecond = await engine.create(BOB, { tool: 't', args: { script: 'finish' } });
        const bobWaits = await engine.waitFor(BOB, bobsSecond.taskId, (r) => r.statusMessage === shareMessage(1));
        // Alice runs one and has two waiting: Bob's message counts Bob's run only, and names no task.
        expect(JSON.stringify(bobWaits)).not.toContain(alices[0]?.taskId);
        await expect(engine.get(BOB, alices[1]?.taskId as string)).rejects.toThrow();
        executor.release(bobsFirst.taskId);
        expect((await engine.waitForTerminal(BOB, bobsSecond.taskId)).status).toBe('completed');
        expect(executor.mostAtOnce.get('alice')).toBe(1);
        for (const _ of alices) {
          await waitUntil(() => executor.held.size > 0);
          executor.releaseHeld();
        }
        for (const task of alices) expect((await engine.waitForTerminal(ALICE, task.taskId)).status).toBe('completed');
      });
    });

    it('announces creation and every change to subscribers, and stops after unsubscribe', async () => {
      const engine = await setUp();
      const events: TaskEvent[] = [];
      const unsubscribe = engine.subscribe((event) => events.push(event));
      const created = await engine.create(ALICE, { tool: 't', args: { script: 'finish' } });
      await engine.waitForTerminal(ALICE, created.taskId);
      await waitUntil(() => events.some((e) => e.record.taskId === created.taskId && e.record.status === 'completed'));
      const mine = events.filter((e) => e.record.taskId === created.taskId).map((e) => e.record.status);
      expect(mine.at(-1)).toBe('completed');
      unsubscribe();
      const count = events.length;
      await engine.waitForTerminal(
        ALICE,
        (await engine.create(ALICE, { tool: 't', args: { script: 'finish' } })).taskId,
      );
      await sleep(50);
      expect(events.length).toBe(count);
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** `waitUntil` for a condition that must be read asynchronously. */
async function waitUntilAsync(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

export async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
