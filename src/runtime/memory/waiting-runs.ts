/**
 * The runs of the in-process runtime that wait in place and have left their slot to the queue,
 * by what they wait for: an answer, a callback or their children (sleeps are kept apart, on
 * their timers). One entry per run, so the slot count and the parked gauge read the same
 * bookkeeping and cannot drift apart.
 */

/** What a run waiting in place waits for (the `reason` of the parked gauge). */
export type InPlaceWait = 'input' | 'callback' | 'children';

/** Which runs wait in place, and for what: one entry per run from its wait's start to its end. */
export class WaitingRuns {
  private readonly reasons = new Map<string, InPlaceWait>();

  /** The run of `taskId` waits for `reason` from now on, holding no slot. */
  start(taskId: string, reason: InPlaceWait): void {
    this.reasons.set(taskId, reason);
  }

  /** The run of `taskId` waits no more (its wait settled, or it was aborted). */
  end(taskId: string): void {
    this.reasons.delete(taskId);
  }

  /** Whether the run of `taskId` waits in place now (so it holds no slot). */
  has(taskId: string): boolean {
    return this.reasons.has(taskId);
  }

  /** How many runs wait for each reason. */
  counts(): Record<InPlaceWait, number> {
    const counts = { input: 0, callback: 0, children: 0 };
    for (const reason of this.reasons.values()) counts[reason]++;
    return counts;
  }
}
