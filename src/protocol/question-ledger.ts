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

export class QuestionLedger {
  /** Per task, the questions out with the client or settled. */
  private readonly marks = new Map<string, Map<string, Mark>>();
  private readonly listeners = new Set<(taskId: string) => void>();

  /**
   * Claims `key` of `taskId` for the caller's channel: undefined when it is out on another
   * channel or was settled, and must not be sent.
   */
  claim(taskId: string, key: string): QuestionClaim | undefined {
    let keys = this.marks.get(taskId);
    if (keys?.has(key)) return undefined;
    if (!keys) {
      keys = new Map();
      this.marks.set(taskId, keys);
    }
    keys.set(key, 'out');
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

  /** How many tasks have questions out or settled here (for leak checks). */
  get size(): number {
    return this.marks.size;
  }
}
