/**
 * Per-principal caps on things a caller holds open (sessions, listen streams, blocking
 * `tasks/result` calls): each holds a slot until it ends. The slots are counted in the
 * runtime's `SlotLedger`: on Redis across every server process of the app (leases that lapse
 * when a process dies), in memory on the in-process runtime. A caller without a principal is
 * counted by its address where the HTTP front knows it (so one anonymous client cannot hold
 * every anonymous caller's slots); callers with neither (stdio, a host that passes no
 * connection) share one count.
 *
 * When the ledger cannot count (Redis does not answer), a slot is counted in this process's
 * memory instead: the cap then holds per process, as it would without Redis, and the server
 * keeps serving what needs no Redis (plain tool calls) rather than refusing every session.
 */

import type { SlotLedger } from '../engine/slot-ledger.js';
import { type CallerIdentity, identityKey } from '../http/client-address.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { limitExceeded } from '../protocol/rpc-error.js';
import { MemorySlotLedger } from '../runtime/memory/slot-ledger.js';

export class PrincipalSlots {
  /** Where slots are counted while the ledger cannot count: this process alone. */
  private readonly fallback = new MemorySlotLedger();

  constructor(
    private readonly ledger: SlotLedger,
    /** The ledger's name of what is capped (`sessions`, `listen`, `blocking`): its Redis key. */
    private readonly cap: string,
    private readonly limit: number,
    /** The limit's configuration name (`maxSessionsPerPrincipal`), for the error. */
    private readonly limitName: string,
    /** What is counted, in the plural (`open sessions`). */
    private readonly what: string,
  ) {}

  /**
   * A release function (idempotent), or `undefined` when the principal already holds `limit`
   * (in the ledger, or in this process while the ledger cannot count).
   */
  async tryAcquire(who: CallerIdentity): Promise<(() => void) | undefined> {
    const holder = identityKey(who);
    try {
      return await this.ledger.take(this.cap, holder, this.limit);
    } catch {
      return this.fallback.take(this.cap, holder, this.limit);
    }
  }

  refusal(): JsonRpcError {
    return limitExceeded(
      this.limitName,
      this.limit,
      `Too many ${this.what} for this caller: the limit is ${this.limit} (${this.limitName})`,
    );
  }
}
