/**
 * Per-principal caps on things a caller holds open in this process (sessions, listen streams,
 * blocking `tasks/result` calls): each holds a slot until it ends. A caller without a principal
 * is counted by its address where the HTTP front knows it (so one anonymous client cannot hold
 * every anonymous caller's slots); otherwise anonymous callers share one count.
 */

import { type CallerIdentity, identityKey } from '../http/client-address.js';
import type { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { limitExceeded } from '../protocol/rpc-error.js';

export class PrincipalSlots {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly limit: number,
    /** The limit's configuration name (`maxSessionsPerPrincipal`), for the error. */
    private readonly limitName: string,
    /** What is counted, in the plural (`open sessions`). */
    private readonly what: string,
  ) {}

  /** A release function (idempotent), or `undefined` when the principal already holds `limit`. */
  tryAcquire(who: CallerIdentity): (() => void) | undefined {
    const key = identityKey(who);
    const count = this.held.get(key) ?? 0;
    if (count >= this.limit) return undefined;
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left <= 0) this.held.delete(key);
      else this.held.set(key, left);
    };
  }

  refusal(): JsonRpcError {
    return limitExceeded(
      this.limitName,
      this.limit,
      `Too many ${this.what} for this caller: the limit is ${this.limit} (${this.limitName})`,
    );
  }
}
