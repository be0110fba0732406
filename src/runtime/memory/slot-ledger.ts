/**
 * The slot ledger of one process: counts in memory. What the in-process runtime uses (the
 * process is the whole app), and what the host falls back to beside a runtime that has no
 * ledger of its own.
 */
import type { ReleaseSlot, SlotLedger } from '../../engine/slot-ledger.js';

export class MemorySlotLedger implements SlotLedger {
  readonly scope = 'process';
  private readonly counts = new Map<string, number>();

  async take(cap: string, holder: string, limit: number): Promise<ReleaseSlot | undefined> {
    const key = keyOf(cap, holder);
    if ((this.counts.get(key) ?? 0) >= limit) return undefined;
    return this.count(key);
  }

  async hold(cap: string, holder: string): Promise<ReleaseSlot> {
    return this.count(keyOf(cap, holder));
  }

  async held(cap: string, holder: string): Promise<number> {
    return this.counts.get(keyOf(cap, holder)) ?? 0;
  }

  async close(): Promise<void> {
    this.counts.clear();
  }

  /** One more slot under `key`, and its release. */
  private count(key: string): ReleaseSlot {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    };
  }
}

/** A NUL cannot occur in a cap name, so no two (cap, holder) pairs share a key. */
function keyOf(cap: string, holder: string): string {
  return `${cap}\u0000${holder}`;
}
