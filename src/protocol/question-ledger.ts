/**
 * Which of a session's questions are out with its client, so each reaches the client once
 * whichever channel it listens on: a blocking `tasks/result` stream, the standalone stream, or
 * a companion tool's wait. Every channel that asks a question claims it here first; a question
 * another channel holds is not asked again. No wire format and no transport: only bookkeeping.
 *
 * A claim ends in one of two ways:
 * - **settled**: the client's answer was taken, or the question was answered elsewhere or
 *   withdrawn meanwhile (the engine ignored the answer). It is never asked again on this
 *   session: question keys are unique over a task's life, and an older version of the task
 *   that still lists the key must not bring it back.
 * - **released**: the answer was refused (it did not fit the question) or the client did not
 *   answer (an error, a timeout, a lost connection). The question is askable again, and every
 *   channel waiting on the task hears of it (`onReleased`) to ask it anew.
 */

/** One channel's hold on one question, from sending it until its answer is in. */
export interface QuestionClaim {
  /** The answer was taken, or no longer needed: the question stays asked for this session. */
  settle(): void;
  /** The answer was refused or never came: the question may be asked again, on any channel. */
  release(): void;
}

type Mark = 'out' | 'settled';

/**
 * How many tasks a ledger keeps marks for by default. A task's marks go when a channel sees it
 * end (`forget`), but a session may ask about many tasks it never sees end (a wait that timed
 * out, a task another session follows); past this many, the settled marks of the tasks asked
 * about longest ago make room. At worst such a task's question is asked of the client again.
 */
export const DEFAULT_LEDGER_TASKS = 1000;

export class QuestionLedger {
  /** Per task, the questions out with the client or settled, the task claimed longest ago first. */
  private readonly marks = new Map<string, Map<string, Mark>>();
  private readonly listeners = new Set<(taskId: string) => void>();

  /** `maxTasks`: the most tasks with marks kept before the oldest settled ones are dropped. */
  constructor(private readonly maxTasks = DEFAULT_LEDGER_TASKS) {}

  /**
   * Claims `key` of `taskId` for the caller's channel: undefined when it is out on another
   * channel or was settled, and must not be sent.
   */
  claim(taskId: string, key: string): QuestionClaim | undefined {
    let keys = this.marks.get(taskId);
    if (keys?.has(key)) return undefined;
    if (keys) {
      // The task moves to the newest end: it is being asked about now.
      this.marks.delete(taskId);
    } else {
      keys = new Map();
    }
    this.marks.set(taskId, keys);
    keys.set(key, 'out');
    this.evictSettled();
    let ended = false;
    return {
      settle: () => {
        if (ended) return;
        ended = true;
        // A task forgotten meanwhile (it ended) has nothing left to guard.
        this.marks.get(taskId)?.set(key, 'settled');
      },
      release: () => {
        if (ended) return;
        ended = true;
        const current = this.marks.get(taskId);
        if (current?.get(key) !== 'out') return;
        current.delete(key);
        if (current.size === 0) this.marks.delete(taskId);
        for (const listener of [...this.listeners]) listener(taskId);
      },
    };
  }

  /** Whether `key` of `taskId` may be asked now: neither out on a channel nor settled. */
  isAskable(taskId: string, key: string): boolean {
    return !this.marks.get(taskId)?.has(key);
  }

  /** Hears of each question made askable again; returns the function that stops listening. */
  onReleased(listener: (taskId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The task ended or is gone: nothing of it will be asked again. */
  forget(taskId: string): void {
    this.marks.delete(taskId);
  }

  /** Over `maxTasks`: drops the tasks claimed longest ago whose questions are all settled. */
  private evictSettled(): void {
    if (this.marks.size <= this.maxTasks) return;
    for (const [taskId, keys] of this.marks) {
      if (this.marks.size <= this.maxTasks) return;
      if ([...keys.values()].every((mark) => mark === 'settled')) this.marks.delete(taskId);
    }
  }

  /** How many tasks have questions out or settled here (for leak checks). */
  get size(): number {
    return this.marks.size;
  }
}
