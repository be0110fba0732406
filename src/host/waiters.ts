/**
 * Who is waiting on tasks right now, per session: blocking `tasks/result` calls and listen
 * streams. Every wait enters here and leaves when it ends, whether the task ended, expired, or
 * the client hung up, so a leak shows as a count that never falls (see `TaskServer.stats()`).
 */

export type WaiterKind = 'result' | 'stream';

/** Open waits of one kind each: blocking `tasks/result` calls and listen streams. */
export interface WaiterCounts {
  result: number;
  stream: number;
}

/**
 * The waits a server holds open, in total and per session (see `TaskServer.stats`). Each count
 * returns to zero once its clients are gone; one that never falls is a leak.
 */
export interface WaiterStats {
  readonly total: WaiterCounts;
  /** Per session id (2026 requests and stdio have none: `(no session)`); sessions at zero are left out. */
  readonly sessions: Readonly<Record<string, WaiterCounts>>;
}

export class WaiterRegistry {
  private readonly sessions = new Map<string, WaiterCounts>();

  /** Counts one wait; `leave` (idempotent) uncounts it. */
  enter(session: string, kind: WaiterKind): { leave(): void } {
    const counts = this.sessions.get(session) ?? { result: 0, stream: 0 };
    counts[kind]++;
    this.sessions.set(session, counts);
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        counts[kind]--;
        if (counts.result === 0 && counts.stream === 0) this.sessions.delete(session);
      },
    };
  }

  stats(): WaiterStats {
    const total: WaiterCounts = { result: 0, stream: 0 };
    const sessions: Record<string, WaiterCounts> = {};
    for (const [session, counts] of this.sessions) {
      total.result += counts.result;
      total.stream += counts.stream;
      sessions[session] = { ...counts };
    }
    return { total, sessions };
  }
}
