/**
 * PrincipalSlots while its ledger does not answer: two "processes" (two PrincipalSlots) count
 * in one shared ledger (Redis, here a MemorySlotLedger each can be cut off from). Counted
 * locally, a process never holds more than the limit for a caller (ledger slots included), it
 * says so in a log line and a metric, and once the ledger answers again it hands over what it
 * counted alone, so the other process sees it.
 */
import { describe, expect, it } from 'vitest';
import { TaskError } from '../../src/engine/errors.js';
import type { ReleaseSlot, SlotLedger } from '../../src/engine/slot-ledger.js';
import { PrincipalSlots } from '../../src/host/principal-slots.js';
import type { Logger } from '../../src/observe/logger.js';
import { MemorySlotLedger } from '../../src/runtime/memory/slot-ledger.js';

const ALICE = { principal: 'alice' };
const BOB = { principal: 'bob' };

/** One process's connection to the shared ledger: `down` makes it fail as Redis does when it does not answer. */
class Connection implements SlotLedger {
  readonly scope = 'app';
  down = false;
  /** Takes wait on this while set, as on a slow Redis. */
  stall: Promise<void> | undefined;

  constructor(private readonly shared: MemorySlotLedger) {}

  async take(cap: string, holder: string, limit: number): Promise<ReleaseSlot | undefined> {
    await this.stall;
    this.failIfDown();
    return this.shared.take(cap, holder, limit);
  }

  async hold(cap: string, holder: string): Promise<ReleaseSlot> {
    this.failIfDown();
    return this.shared.hold(cap, holder);
  }

  held(cap: string, holder: string): Promise<number> {
    return this.shared.held(cap, holder);
  }

  async close(): Promise<void> {}

  private failIfDown(): void {
    if (this.down) throw new TaskError('RUNTIME_UNAVAILABLE', 'The task store (Redis) did not answer within 3000 ms');
  }
}

function process(shared: MemorySlotLedger) {
  const connection = new Connection(shared);
  const lines: { level: string; message: string }[] = [];
  const record =
    (level: string) =>
    (message: string): void => {
      lines.push({ level, message });
    };
  const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
  const countedLocally: string[] = [];
  const slots = new PrincipalSlots({
    ledger: connection,
    cap: 'blocking',
    limit: 2,
    limitName: 'maxBlockingResultsPerPrincipal',
    what: 'blocking waits',
    logger,
    onCountedLocally: (cap) => countedLocally.push(cap),
  });
  return { connection, slots, lines, countedLocally };
}

describe('PrincipalSlots while the ledger does not answer', () => {
  it('counts what this process already holds in the ledger, so it never holds more than the limit', async () => {
    const shared = new MemorySlotLedger();
    const a = process(shared);
    expect(await a.slots.tryAcquire(ALICE)).toBeTypeOf('function');
    expect(await a.slots.tryAcquire(ALICE)).toBeTypeOf('function');
    a.connection.down = true;
    expect(await a.slots.tryAcquire(ALICE)).toBeUndefined();
    // Another principal has a budget of its own, counted here meanwhile.
    expect(await a.slots.tryAcquire(BOB)).toBeTypeOf('function');
    expect(await a.slots.tryAcquire(BOB)).toBeTypeOf('function');
    expect(await a.slots.tryAcquire(BOB)).toBeUndefined();
  });

  it('counts a take still waiting on the ledger as held', async () => {
    const shared = new MemorySlotLedger();
    const a = process(shared);
    expect(await a.slots.tryAcquire(ALICE)).toBeTypeOf('function');
    let answer = () => {};
    a.connection.stall = new Promise((resolve) => {
      answer = resolve;
    });
    const waiting = a.slots.tryAcquire(ALICE);
    a.connection.stall = undefined;
    a.connection.down = true;
    // One in the ledger, one asking it: none left to count here.
    expect(await a.slots.tryAcquire(ALICE)).toBeUndefined();
    a.connection.down = false;
    answer();
    expect(await waiting).toBeTypeOf('function');
  });

  it('logs the switch once per outage and counts each slot it counts alone', async () => {
    const shared = new MemorySlotLedger();
    const a = process(shared);
    a.connection.down = true;
    await a.slots.tryAcquire(ALICE);
    await a.slots.tryAcquire(BOB);
    expect(a.lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(a.lines[0]?.message).toMatch(/counting this cap in this process alone/);
    expect(a.countedLocally).toEqual(['blocking', 'blocking']);
    a.connection.down = false;
    await a.slots.tryAcquire(ALICE);
    expect(a.lines.filter((line) => line.level === 'info').map((line) => line.message)).toEqual([
      expect.stringMatching(/answers again/),
    ]);
    a.connection.down = true;
    await a.slots.tryAcquire(BOB);
    expect(a.lines.filter((line) => line.level === 'warn')).toHaveLength(2);
  });

  it('hands what it counted alone to the ledger once it answers, so other processes see it', async () => {
    const shared = new MemorySlotLedger();
    const [a, b] = [process(shared), process(shared)];
    a.connection.down = true;
    const first = await a.slots.tryAcquire(ALICE);
    const second = await a.slots.tryAcquire(ALICE);
    expect(second).toBeTypeOf('function');
    // B reaches the ledger, which knows nothing of A's two.
    expect(await shared.held('blocking', 'p:alice')).toBe(0);
    a.connection.down = false;
    // A's next take reaches the ledger: A's two count there from now on, so this one is refused.
    expect(await a.slots.tryAcquire(ALICE)).toBeUndefined();
    await expect.poll(() => shared.held('blocking', 'p:alice')).toBe(2);
    expect(await b.slots.tryAcquire(ALICE)).toBeUndefined();
    expect(await b.slots.tryAcquire(BOB)).toBeTypeOf('function');
    // A slot handed over is let go in the ledger.
    first?.();
    first?.();
    expect(await shared.held('blocking', 'p:alice')).toBe(1);
    expect(await b.slots.tryAcquire(ALICE)).toBeTypeOf('function');
    second?.();
    expect(await shared.held('blocking', 'p:alice')).toBe(1);
  });

  it('leaves room in the ledger for what it still counts alone', async () => {
    const shared = new MemorySlotLedger();
    const a = process(shared);
    a.connection.down = true;
    const local = await a.slots.tryAcquire(ALICE);
    // The hand-over fails (the ledger takes but does not hold): the slot stays counted here.
    const hold = a.connection.hold.bind(a.connection);
    a.connection.hold = async () => {
      throw new TaskError('RUNTIME_UNAVAILABLE', 'no answer');
    };
    a.connection.down = false;
    expect(await a.slots.tryAcquire(ALICE)).toBeTypeOf('function');
    // One in the ledger, one counted here: the limit of 2 is reached.
    expect(await a.slots.tryAcquire(ALICE)).toBeUndefined();
    expect(await shared.held('blocking', 'p:alice')).toBe(1);
    a.connection.hold = hold;
    local?.();
    expect(await a.slots.tryAcquire(ALICE)).toBeTypeOf('function');
  });
});
