/**
 * One question, one ask per session, one answer taken: the ledger's claims, the engine's rule
 * for a second answer, and `relayQuestionsUntilDone` consulting a ledger it shares with other
 * channels (as the standalone-stream push and companion waits do).
 */
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/engine/engine.js';
import { type AnswerOutcome, answerChange } from '../../src/engine/inputs.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { QuestionLedger } from '../../src/protocol/question-ledger.js';
import { questionTimeoutMs, relayQuestionsUntilDone } from '../../src/protocol/question-relay.js';
import type { ToolCalls } from '../../src/protocol/tool-calls.js';

const question = { question: 'confirm', params: { message: 'Delete a.txt?', requestedSchema: { type: 'object' } } };
const waiting: TaskRecord = {
  taskId: 't1',
  owner: 'alice',
  tool: 'confirm_delete',
  args: {},
  status: 'input_required',
  createdAt: Date.now(),
  lastUpdatedAt: Date.now(),
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
  inputRequests: { confirm: question },
};
const alice: Caller = { principal: 'alice' };
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('QuestionLedger', () => {
  it('lets one channel hold a question until it settles or releases it', () => {
    const ledger = new QuestionLedger();
    const claim = ledger.claim('t1', 'confirm');
    expect(claim).toBeDefined();
    expect(ledger.claim('t1', 'confirm')).toBeUndefined();
    expect(ledger.isAskable('t1', 'confirm')).toBe(false);
    // Another question of the same task, and the same key of another task, are their own.
    expect(ledger.claim('t1', 'other')).toBeDefined();
    expect(ledger.claim('t2', 'confirm')).toBeDefined();
  });

  it('makes a released question askable again and says so; a settled one never', () => {
    const ledger = new QuestionLedger();
    const released: string[] = [];
    const stop = ledger.onReleased((taskId) => released.push(taskId));
    ledger.claim('t1', 'confirm')?.release();
    expect(released).toEqual(['t1']);
    expect(ledger.isAskable('t1', 'confirm')).toBe(true);

    const claim = ledger.claim('t1', 'confirm');
    claim?.settle();
    // A claim ends once: a release after the settle changes nothing.
    claim?.release();
    expect(released).toEqual(['t1']);
    expect(ledger.claim('t1', 'confirm')).toBeUndefined();
    stop();
    ledger.claim('t1', 'next')?.release();
    expect(released).toEqual(['t1']);
  });

  it('keeps marks for at most maxTasks tasks, dropping the settled ones asked about longest ago', () => {
    const ledger = new QuestionLedger(3);
    ledger.claim('old', 'q')?.settle();
    const held = ledger.claim('held', 'q');
    ledger.claim('touched', 'q')?.settle();
    // Asked about again: 'touched' becomes the newest.
    ledger.claim('touched', 'r')?.settle();
    ledger.claim('new', 'q')?.settle();
    expect(ledger.size).toBe(3);
    // 'old' (settled, oldest) made room; a question still out is never dropped.
    expect(ledger.isAskable('old', 'q')).toBe(true);
    expect(ledger.isAskable('held', 'q')).toBe(false);
    expect(ledger.isAskable('touched', 'r')).toBe(false);
    ledger.claim('newer', 'q')?.settle();
    // The oldest settled one now is 'touched': 'held' is skipped while its question is out.
    expect(ledger.isAskable('touched', 'q')).toBe(true);
    expect(ledger.isAskable('held', 'q')).toBe(false);
    expect(ledger.size).toBe(3);
    held?.settle();
    for (let n = 0; n < 100; n++) ledger.claim(`task-${n}`, 'q')?.settle();
    expect(ledger.size).toBe(3);
  });

  it('forgets an ended task', () => {
    const ledger = new QuestionLedger();
    ledger.claim('t1', 'confirm')?.settle();
    expect(ledger.size).toBe(1);
    ledger.forget('t1');
    expect(ledger.size).toBe(0);
  });
});

describe('a second answer to the same question', () => {
  const accept = { action: 'accept', content: { confirm: true } };
  const noProblem = () => undefined;

  it('is ignored, whichever channel sends it: the first answer stands and nothing changes', () => {
    const first = answerChange(waiting, { confirm: accept }, noProblem);
    expect(first).toMatchObject({ accepted: ['confirm'], rejected: {}, ignored: [] });
    const answered: TaskRecord = {
      ...waiting,
      status: 'working',
      inputRequests: {},
      inputAnswers: { confirm: { action: 'accept', content: { confirm: true } } },
    };
    const second = answerChange(answered, { confirm: { action: 'decline' } }, noProblem);
    expect(second).toEqual({ change: undefined, accepted: [], rejected: {}, ignored: ['confirm'] });
  });

  it('is ignored once the task ended; a refused answer keeps the question open', () => {
    expect(answerChange({ ...waiting, status: 'cancelled' }, { confirm: accept }, noProblem)).toMatchObject({
      change: undefined,
      ignored: ['confirm'],
    });
    const refused = answerChange(waiting, { confirm: accept }, () => 'confirm must be a boolean');
    expect(refused.rejected).toEqual({ confirm: 'confirm must be a boolean' });
    expect(refused.change?.inputRequests).toEqual({ confirm: question });
  });
});

/** A task whose versions the test sets, behind the two things the relay uses. */
function fakeCalls(answer: (responses: Record<string, unknown>) => AnswerOutcome) {
  let record = waiting;
  const wakers = new Set<() => void>();
  const calls = {
    engine: {
      waitFor: (_caller: Caller, _taskId: string, accept: (record: TaskRecord) => boolean, signal: AbortSignal) =>
        new Promise<TaskRecord>((resolve, reject) => {
          if (signal.aborted) {
            reject(signal.reason);
            return;
          }
          const check = () => {
            if (!accept(record)) return;
            wakers.delete(check);
            resolve(record);
          };
          signal.addEventListener('abort', () => {
            wakers.delete(check);
            reject(signal.reason);
          });
          wakers.add(check);
          check();
        }),
    },
    answer: async (_caller: Caller, _taskId: string, responses: Record<string, unknown>) => answer(responses),
  } as unknown as ToolCalls;
  return {
    calls,
    set(next: TaskRecord) {
      record = next;
      for (const wake of [...wakers]) wake();
    },
  };
}

const taken: AnswerOutcome = { change: undefined, accepted: ['confirm'], rejected: {}, ignored: [] };
const ignored: AnswerOutcome = { change: undefined, accepted: [], rejected: {}, ignored: ['confirm'] };

describe('relayQuestionsUntilDone with a shared ledger', () => {
  it('does not ask a question another channel holds, and asks it once that channel releases it', async () => {
    const task = fakeCalls(() => taken);
    const ledger = new QuestionLedger();
    const elsewhere = ledger.claim('t1', 'confirm');
    const asked: unknown[] = [];
    const relay = relayQuestionsUntilDone(
      task.calls,
      alice,
      't1',
      new AbortController().signal,
      async (params) => {
        asked.push(params);
        return { action: 'accept', content: { confirm: true } };
      },
      { ledger },
    );
    await tick();
    expect(asked).toEqual([]);
    elsewhere?.release();
    await tick();
    expect(asked).toHaveLength(1);
    expect(ledger.isAskable('t1', 'confirm')).toBe(false);
    task.set({ ...waiting, status: 'completed', inputRequests: {} });
    await expect(relay).resolves.toMatchObject({ status: 'completed' });
  });

  it('settles a question whose answer the engine ignored, and does not ask it again', async () => {
    const task = fakeCalls(() => ignored);
    const ledger = new QuestionLedger();
    let asked = 0;
    const relay = relayQuestionsUntilDone(
      task.calls,
      alice,
      't1',
      new AbortController().signal,
      async () => {
        asked++;
        return { action: 'decline' };
      },
      { ledger },
    );
    await tick();
    // A stale version that still lists the question brings it back to no channel.
    task.set({ ...waiting, lastUpdatedAt: waiting.lastUpdatedAt + 1 });
    await tick();
    expect(asked).toBe(1);
    expect(ledger.claim('t1', 'confirm')).toBeUndefined();
    task.set({ ...waiting, status: 'completed', inputRequests: {} });
    await relay;
  });

  it('fails when the client does not answer, and leaves the question askable for another channel', async () => {
    const task = fakeCalls(() => taken);
    const ledger = new QuestionLedger();
    let asked = 0;
    const relay = relayQuestionsUntilDone(
      task.calls,
      alice,
      't1',
      new AbortController().signal,
      async () => {
        asked++;
        throw new Error('Request timed out');
      },
      { ledger },
    );
    await expect(relay).rejects.toThrow("The client did not answer the task's question 'confirm': Request timed out");
    // Asked once: its own release does not make this wait ask again.
    expect(asked).toBe(1);
    expect(ledger.isAskable('t1', 'confirm')).toBe(true);
  });

  it('keeps a ledger of its own without one: each call asks once', async () => {
    const task = fakeCalls(() => taken);
    let asked = 0;
    const elicit = async () => {
      asked++;
      return { action: 'decline' };
    };
    const first = relayQuestionsUntilDone(task.calls, alice, 't1', new AbortController().signal, elicit);
    const second = relayQuestionsUntilDone(task.calls, alice, 't1', new AbortController().signal, elicit);
    await tick();
    expect(asked).toBe(2);
    task.set({ ...waiting, status: 'completed', inputRequests: {} });
    await Promise.all([first, second]);
  });
});

describe('how long a question waits for its answer', () => {
  it('until the task expires, at least a second, and within what a timer can wait for a task without a TTL', () => {
    const now = Date.now();
    expect(questionTimeoutMs({ ...waiting, createdAt: now, ttlMs: 60_000 })).toBeGreaterThan(59_000);
    expect(questionTimeoutMs({ ...waiting, createdAt: now - 120_000, ttlMs: 60_000 })).toBe(1000);
    // An unbounded timeout would make the timer fire at once (Node clamps it to 1 ms).
    expect(questionTimeoutMs({ ...waiting, ttlMs: null })).toBe(2 ** 31 - 1);
  });
});

describe('relayQuestionsUntilDone with a deadline', () => {
  /** An elicitation a person answers when the test says so; aborting it withdraws the dialog. */
  function person() {
    let click: (value: unknown) => void = () => {};
    const withdrawn: unknown[] = [];
    let asked = 0;
    const elicit = (_params: Record<string, unknown>, _timeoutMs: number, signal?: AbortSignal) =>
      new Promise<unknown>((resolve, reject) => {
        asked++;
        click = resolve;
        signal?.addEventListener('abort', () => {
          withdrawn.push(signal.reason);
          reject(signal.reason);
        });
      });
    return {
      elicit,
      answer: () => click({ action: 'accept', content: { confirm: true } }),
      withdrawn,
      asked: () => asked,
    };
  }

  it('ends at the deadline when no question is out', async () => {
    const task = fakeCalls(() => taken);
    task.set({ ...waiting, status: 'working', inputRequests: {} });
    const deadline = new AbortController();
    const relay = relayQuestionsUntilDone(task.calls, alice, 't1', new AbortController().signal, person().elicit, {
      deadline: { signal: deadline.signal, answerWithinMs: 60_000 },
    });
    deadline.abort(new Error('time is up'));
    await expect(relay).rejects.toThrow('time is up');
  });

  it('keeps a dialog that is out past the deadline, hands its answer to the task, then ends', async () => {
    const answers: Record<string, unknown>[] = [];
    const task = fakeCalls((responses) => {
      answers.push(responses);
      return taken;
    });
    const someone = person();
    const deadline = new AbortController();
    const relay = relayQuestionsUntilDone(task.calls, alice, 't1', new AbortController().signal, someone.elicit, {
      deadline: { signal: deadline.signal, answerWithinMs: 60_000 },
    });
    await tick();
    expect(someone.asked()).toBe(1);
    deadline.abort(new Error('time is up'));
    await tick();
    expect(someone.withdrawn).toEqual([]);
    // The task asks something new meanwhile: not asked after the deadline.
    task.set({ ...waiting, inputRequests: { ...waiting.inputRequests, more: question } });
    await tick();
    expect(someone.asked()).toBe(1);
    someone.answer();
    await expect(relay).rejects.toThrow('time is up');
    expect(answers).toEqual([{ confirm: { action: 'accept', content: { confirm: true } } }]);
  });

  it('withdraws the dialog answerWithinMs after the deadline, and at once on a hang-up', async () => {
    const task = fakeCalls(() => taken);
    const late = person();
    const deadline = new AbortController();
    const capped = relayQuestionsUntilDone(task.calls, alice, 't1', new AbortController().signal, late.elicit, {
      deadline: { signal: deadline.signal, answerWithinMs: 30 },
    });
    await tick();
    deadline.abort(new Error('time is up'));
    await expect(capped).rejects.toThrow('time is up');
    expect(late.withdrawn).toHaveLength(1);

    const hungUp = person();
    const hangup = new AbortController();
    const relay = relayQuestionsUntilDone(task.calls, alice, 't1', hangup.signal, hungUp.elicit, {
      deadline: { signal: new AbortController().signal, answerWithinMs: 60_000 },
    });
    await tick();
    hangup.abort(new Error('the client hung up'));
    await expect(relay).rejects.toThrow('the client hung up');
    expect(hungUp.withdrawn).toHaveLength(1);
  });
});
