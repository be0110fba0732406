/**
 * Caps on what a caller holds open (2025-11-25 sessions, listen streams, blocking
 * `tasks/result` calls): a ledger of slots, each held until its holder lets go. The host
 * decides what is capped and at how many; a runtime decides where the count lives. The
 * in-process runtime counts in memory (one process is the whole app); the BullMQ runtime counts
 * in Redis with leases, so a cap holds across every server process of the app and the slots of
 * a process that dies come back when its leases run out.
 */

/** Lets a slot go; calling it again does nothing. */
export type ReleaseSlot = () => void;

export interface SlotLedger {
  /**
   * `app` when the count is shared by every process of the app (Redis), `process` when each
   * process counts its own (memory). The docs' Limits table says which caps are global.
   */
  readonly scope: 'app' | 'process';
  /**
   * Takes one of the `limit` slots of `cap` (`sessions`, `listen`, `blocking`) that `holder`
   * (a caller's budget key, see `identityKey`) may hold. Resolves with the release, or
   * `undefined` when the holder already holds `limit`. Rejects with
   * `TaskError('RUNTIME_UNAVAILABLE')` when the ledger's store does not answer: a cap that
   * cannot be counted refuses rather than lets everything through.
   */
  take(cap: string, holder: string, limit: number): Promise<ReleaseSlot | undefined>;
  /**
   * Counts a slot that `holder` already holds, whatever the count: a slot granted while the
   * ledger could not count (see `PrincipalSlots`), handed to it once it answers so that every
   * process sees it. Resolves with its release; rejects as `take` does.
   */
  hold(cap: string, holder: string): Promise<ReleaseSlot>;
  /** Slots of `cap` that `holder` holds right now, across the scope (for tests and stats). */
  held(cap: string, holder: string): Promise<number>;
  /** Lets go of every slot this process holds and stops keeping its leases alive. */
  close(): Promise<void>;
}
