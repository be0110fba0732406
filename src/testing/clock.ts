/**
 * A clock tests move by hand, so a TTL, an expiry or the end of a `ctx.sleep` is reached
 * without waiting for it.
 */
export interface TestClock {
  /** The current time in ms, as `Date.now()` reads it. */
  now(): number;
  /** Moves the clock forward; on the in-process runtime, sleeps due by the new time wake at once. */
  advance(ms: number): void;
}

/** A `TestClock` that also tells who listens of each advance (the in-process runtime's sleepers). */
export interface AdvancingClock extends TestClock {
  /** Calls `listener` after each `advance`; returns how to stop. */
  onAdvance(listener: () => void): () => void;
}

export function createTestClock(): AdvancingClock {
  let offset = 0;
  const listeners = new Set<() => void>();
  return {
    // Real time keeps flowing underneath, so timers and timestamps stay ordered.
    now: () => Date.now() + offset,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) takes a positive number of ms, got ${ms}`);
      offset += ms;
      for (const listener of [...listeners]) listener();
    },
    onAdvance(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
