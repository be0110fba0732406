/** A clock tests move by hand, so a TTL or an expiry is reached without waiting for it. */
export interface TestClock {
  /** The current time in ms, as `Date.now()` reads it. */
  now(): number;
  /** Moves the clock forward. */
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let offset = 0;
  return {
    // Real time keeps flowing underneath, so timers and timestamps stay ordered.
    now: () => Date.now() + offset,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) takes a positive number of ms, got ${ms}`);
      offset += ms;
    },
  };
}
