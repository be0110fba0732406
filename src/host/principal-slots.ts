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
 * memory instead, so the server keeps serving what needs no Redis (plain tool calls) rather
 * than refusing every session. Such a local take counts everything this process holds for the
 * caller, in the ledger too (and takes still waiting on it), so one process never holds more
 * than the limit; across N processes the cap can then be passed up to N times, which is why
 * each local take is logged (once per outage) and counted. Every take asks the ledger first,
 * and while slots counted here are left each take also offers them to the ledger, which counts
 * them from the first offer it answers, so the other processes see them again. Until then a take
 * through the ledger leaves room for them.
 */

import type { ReleaseSlot, SlotLedger } from '../engine/slot-ledger.js';
import { type CallerIdentity, identityKey } from '../http/client-address.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { Logger } from '../observe/logger.js';
import { limitExceeded } from '../protocol/rpc-error.js';

export interface PrincipalSlotsOptions {
  /** Where slots are counted: the runtime's ledger (Redis on BullMQ), or this process's memory. */
  readonly ledger: SlotLedger;
  /** The ledger's name of what is capped (`sessions`, `listen`, `blocking`): its Redis key. */
  readonly cap: string;
  /** How many slots one caller may hold. */
  readonly limit: number;
  /** The limit's configuration name (`maxSessionsPerPrincipal`), for the error. */
  readonly limitName: string;
  /** What is counted, in the plural (`open sessions`). */
  readonly what: string;
  /** Hears when this process starts and stops counting in its own memory. */
  readonly logger: Logger;
  /** Hears of each slot counted in this process's memory because the ledger did not answer (a metric). */
  readonly onCountedLocally?: (cap: string) => void;
}

/** One slot counted in this process's memory while the ledger did not answer. */
interface LocalSlot {
  released: boolean;
  /** The ledger's release, once the slot was handed to the ledger. */
  handedOver?: ReleaseSlot;
}

/** What this process holds of one caller's slots. */
interface HeldHere {
  /** Slots the ledger counts. */
  ledger: number;
  /** Takes waiting on the ledger: counted as held by a local take, in case the ledger grants them. */
  asking: number;
  /** Slots only this process counts. */
  readonly local: Set<LocalSlot>;
}

export class PrincipalSlots {
  private readonly held = new Map<string, HeldHere>();
  /** Whether the last take reached the ledger: the switch is logged once each way. */
  private counting: 'ledger' | 'locally' = 'ledger';
  /** Slots counted here alone, over every holder. */
  private countedHere = 0;
  private handingOver = false;

  constructor(private readonly options: PrincipalSlotsOptions) {}

  /**
   * A release function (idempotent), or `undefined` when the caller already holds `limit`
   * (in the ledger, or in this process while the ledger cannot count).
   */
  async tryAcquire(who: CallerIdentity): Promise<(() => void) | undefined> {
    const holder = identityKey(who);
    const here = this.entry(holder);
    this.handOver();
    // The ledger does not know of the slots counted here: they take room from what it may grant.
    const room = this.options.limit - here.local.size;
    if (room <= 0) return this.forget(holder, here);
    here.asking++;
    let release: ReleaseSlot | undefined;
    try {
      release = await this.options.ledger.take(this.options.cap, holder, room);
    } catch (error) {
      here.asking--;
      return this.takeLocally(holder, here, error);
    }
    here.asking--;
    this.ledgerAnswers();
    if (!release) return this.forget(holder, here);
    here.ledger++;
    const ledgerRelease = release;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      here.ledger--;
      ledgerRelease();
      this.forget(holder, here);
    };
  }

  refusal(): JsonRpcError {
    return limitExceeded(
      this.options.limitName,
      this.options.limit,
      `Too many ${this.options.what} for this caller: the limit is ${this.options.limit} (${this.options.limitName})`,
    );
  }

  /** The ledger did not answer: counts the slot against all this process holds for the caller. */
  private takeLocally(holder: string, here: HeldHere, error: unknown): ReleaseSlot | undefined {
    if (this.counting === 'ledger') {
      this.counting = 'locally';
      this.options.logger.warn(
        'The slot ledger did not answer: counting this cap in this process alone until it does (each process may then admit the limit)',
        { cap: this.options.cap, limit: this.options.limit, error: String(error) },
      );
    }
    if (here.ledger + here.asking + here.local.size >= this.options.limit) return this.forget(holder, here);
    const slot: LocalSlot = { released: false };
    here.local.add(slot);
    this.countedHere++;
    this.options.onCountedLocally?.(this.options.cap);
    return () => {
      if (slot.released) return;
      slot.released = true;
      if (here.local.delete(slot)) this.countedHere--;
      if (slot.handedOver) {
        here.ledger--;
        slot.handedOver();
      }
      this.forget(holder, here);
    };
  }

  /** A take or a hand-over got an answer: logged once when the ledger comes back. */
  private ledgerAnswers(): void {
    if (this.counting === 'ledger') return;
    this.counting = 'ledger';
    this.options.logger.info('The slot ledger answers again: counting this cap there', {
      cap: this.options.cap,
      countedHere: this.countedHere,
    });
  }

  /**
   * Offers every slot counted here alone to the ledger (one round at a time, a round per take
   * while any are left), so that the other processes count them too.
   */
  private handOver(): void {
    if (this.handingOver || this.countedHere === 0) return;
    this.handingOver = true;
    const round = [...this.held].flatMap(([holder, here]) =>
      [...here.local].map((slot) => this.handOverOne(holder, here, slot)),
    );
    void Promise.allSettled(round).finally(() => {
      this.handingOver = false;
    });
  }

  /** Moves one locally counted slot into the ledger, past the limit if need be: the caller holds it. */
  private async handOverOne(holder: string, here: HeldHere, slot: LocalSlot): Promise<void> {
    const release = await this.options.ledger.hold(this.options.cap, holder);
    this.ledgerAnswers();
    if (slot.released) {
      release();
      return;
    }
    here.local.delete(slot);
    this.countedHere--;
    here.ledger++;
    slot.handedOver = release;
  }

  /** What this process holds for `holder`, kept while it holds or asks for anything (see `forget`). */
  private entry(holder: string): HeldHere {
    let here = this.held.get(holder);
    if (!here) {
      here = { ledger: 0, asking: 0, local: new Set() };
      this.held.set(holder, here);
    }
    return here;
  }

  /** Drops the holder's entry once it holds nothing; `undefined`, for a refusal to return. */
  private forget(holder: string, here: HeldHere): undefined {
    if (here.ledger === 0 && here.asking === 0 && here.local.size === 0 && this.held.get(holder) === here) {
      this.held.delete(holder);
    }
    return undefined;
  }
}
