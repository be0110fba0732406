/**
 * Fair shares between principals across every worker process: at most `limit` of one owner's
 * tasks run at once. A run holds a lease in the owner's running set in Redis (renewed while it
 * runs, by one timer for all of this process's runs, so a killed worker's slot frees itself when the lease runs out); a task over the share
 * joins the owner's waiting line and its job leaves the worker (delayed), holding no slot.
 * Whoever releases a slot pops the line's head and promotes its job: a waiting task starts as
 * soon as one of its owner's runs ends. A delayed waiter also wakes by itself after
 * `SHARE_RECHECK_MS`, the backstop for a wake-up lost with a killed worker.
 */
import type { Job } from 'bullmq';
import type { RedisClient } from './connection.js';
import type { TaskJobData } from './jobs.js';
import type { RuntimeNames } from './keys.js';
import { LuaScript } from './lua-script.js';
import { ShardQueues } from './shard-queues.js';
import { SHARE_FIELD } from './share-field.js';

/** How long a run's slot outlives its last renewal (renewed every third of it). */
export const SHARE_LEASE_MS = 30_000;
/** How long a waiting task's job stays delayed before it looks again by itself. */
export const SHARE_RECHECK_MS = 30_000;
/** Share keys outlive their last write by this much; an idle owner's keys then go. */
const SHARE_KEY_TTL_MS = 24 * 3600 * 1000;
/** Stale waiting-line entries (jobs cancelled or removed) skipped at most per release. */
const MAX_SKIPPED_WAITERS = 100;

/**
 * KEYS: running, waiting, waitingAll. ARGV: taskId, limit, now, leaseMs, order, keyTtlMs.
 * Takes a slot (or keeps the one this task holds: a run after a lost worker), returning -1; or
 * puts the task in line and returns how many of the owner's tasks run.
 */
const ACQUIRE_SOURCE = `
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or count < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[3], ARGV[1])
  return -1
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[5], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
return count
`;
const ACQUIRE = new LuaScript('mcpShareAcquire', ACQUIRE_SOURCE);

/**
 * Lua defining `mcpTake(reply, now, bases)`, for the scripts that activate a job (record-fold.ts)
 * where the share's keys can join them (one Redis, not a cluster): `ACQUIRE` for the job in
 * `reply` (BullMQ's answer with the job it activated: its hash as a flat list, its id, then two
 * delays) when the job's hash names its share (`SHARE_FIELD`; `bases` are `ShareNames.bases`,
 * the key names built as `ShareNames` builds them). The take's answer (-1 taken, else how many
 * of the owner's tasks run, and the task is in line) is added as the reply's fifth element,
 * which BullMQ does not read; a reply with no job, or a job with no share, is returned as it came.
 */
export const SHARE_TAKE_SCRIPT = `
local function mcpShareAcquire(KEYS, ARGV)
${ACQUIRE_SOURCE}
end
local function mcpTake(reply, now, bases)
  if type(reply) ~= 'table' or type(reply[1]) ~= 'table' or type(reply[2]) ~= 'string' then return reply end
  local fields, share, order = reply[1], nil, nil
  for i = 1, #fields, 2 do
    if fields[i] == '${SHARE_FIELD}' then share = fields[i + 1] elseif fields[i] == 'timestamp' then order = fields[i + 1] end
  end
  if not share then return reply end
  local limit, home, part = string.match(share, '^(%d+):(%d+):(.*)$')
  local base = limit and bases[tonumber(home) + 1]
  if not base then return reply end
  reply[5] = mcpShareAcquire(
    { base .. ':running:' .. part, base .. ':waiting:' .. part, base .. ':waiting-all' },
    { reply[2], limit, now, ${SHARE_LEASE_MS}, order or now, ${SHARE_KEY_TTL_MS} })
  return reply
end
`;

/**
 * KEYS: running, waiting, waitingAll. ARGV: taskId ('' to release nothing), now.
 * Frees the task's slot and pops the head of the owner's line: the task to wake, or false.
 */
const RELEASE_SOURCE = `
if ARGV[1] ~= '' then redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]))
local head = redis.call('ZPOPMIN', KEYS[2])
if #head == 0 then return false end
redis.call('ZREM', KEYS[3], head[1])
return head[1]
`;
const RELEASE = new LuaScript('mcpShareRelease', RELEASE_SOURCE);

/**
 * The share's release and take as text, for the job scripts that run them inside theirs
 * (record-fold.ts) where the share's keys can join them (one Redis, not a cluster): the
 * release in the completion, the take (`SHARE_TAKE_SCRIPT`) in every activation.
 */
export const SHARE_SCRIPTS = { shareRelease: RELEASE_SOURCE, shareTake: SHARE_TAKE_SCRIPT } as const;

/**
 * KEYS: running, waiting, waitingAll. ARGV: taskId, limit, now, order, keyTtlMs.
 * A waiter's look once its job has left the worker: 1 if the owner has room now (promote it),
 * else 0 with the task in line again (a release may have popped it while it was leaving).
 */
const STAY_IN_LINE = new LuaScript(
  'mcpShareStayInLine',
  `
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then return 1 end
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
return 0
`,
);

/** A slot held by a run. */
export interface ShareSlot {
  /** Frees the slot and wakes the owner's next waiter: call when the run ends, however it ends. */
  readonly release: () => Promise<void>;
  /** The share's keys, for a release folded into the job's completion (see `releasedInFinish`). */
  readonly keys: readonly [string, string, string];
  /** Stops renewing the lease: the run is over, and its release is on its way. */
  readonly stopRenewing: () => void;
  /**
   * The slot was freed by the script that completed the job (`SHARE_SCRIPTS.shareRelease`),
   * which popped `head` from the owner's line: wakes it (as `release` does).
   */
  readonly releasedInFinish: (head: string | undefined) => Promise<void>;
}

/** Either a slot (release it when the run ends, however it ends) or how many already run. */
export type ShareTurn = ShareSlot | { readonly running: number };

export class PrincipalShares {
  /** A queue handle per shard, made when a wake-up first needs one. */
  private readonly queues: ShardQueues;
  /**
   * The slots this process holds, by running set: one timer renews them all, one transaction
   * per set, every third of a lease (a timer per run cost every task a timer's making and clearing).
   */
  private readonly heldSlots = new Map<string, Map<string, number>>();
  private readonly renewer: NodeJS.Timeout;

  constructor(
    private readonly client: RedisClient,
    private readonly names: RuntimeNames,
    private readonly clock: () => number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.queues = new ShardQueues(client, names);
    ACQUIRE.define(client);
    RELEASE.define(client);
    STAY_IN_LINE.define(client);
    this.renewer = setInterval(() => this.renew(), SHARE_LEASE_MS / 3);
    this.renewer.unref();
  }

  /** A slot in `owner`'s share for `taskId`, or its place in line (`order`: first come first). */
  async acquire(owner: string | null, taskId: string, limit: number, order: number): Promise<ShareTurn> {
    const keys = this.keysOf(owner);
    const reply = Number(
      await ACQUIRE.run(this.client, keys, [taskId, limit, this.clock(), SHARE_LEASE_MS, order, SHARE_KEY_TTL_MS]),
    );
    if (reply >= 0) return { running: reply };
    return this.held(owner, taskId);
  }

  /**
   * The slot `taskId` holds in `owner`'s share, taken by the script that activated its job
   * (`SHARE_ACQUIRE_SCRIPT`), or by `acquire`: renewed from now on until it is released.
   */
  held(owner: string | null, taskId: string): ShareSlot {
    const keys = this.keysOf(owner);
    const running = keys[0];
    // Counted per run: two runs of one task can overlap in this process (a job taken again while
    // its earlier run unwinds), and the earlier one's end must not stop the later one's renewal.
    const members = this.heldSlots.get(running) ?? new Map<string, number>();
    members.set(taskId, (members.get(taskId) ?? 0) + 1);
    this.heldSlots.set(running, members);
    let renewing = true;
    const stopRenewing = () => {
      if (!renewing) return;
      renewing = false;
      const runs = (members.get(taskId) ?? 1) - 1;
      if (runs > 0) members.set(taskId, runs);
      else members.delete(taskId);
      if (members.size === 0 && this.heldSlots.get(running) === members) this.heldSlots.delete(running);
    };
    let released = false;
    return {
      keys,
      stopRenewing,
      release: async () => {
        if (released) return;
        released = true;
        stopRenewing();
        await this.releaseAndWake(owner, taskId);
      },
      releasedInFinish: async (head) => {
        if (released) return;
        released = true;
        stopRenewing();
        if (head !== undefined) await this.wake(owner, head);
      },
    };
  }

  /**
   * Pushes the lease of every slot this process holds a lease further, and writes back any that
   * is gone while its run goes on here: a release sent for an earlier run of the same task (its
   * lock lost to a stall, the job taken again) removes the one member the task has, and the
   * owner would then run one over its share for the rest of this run. A slot this process
   * released is not brought back: its release stops the renewal before its own `ZREM` is sent,
   * and a renewal sent before that runs first on the same connection.
   */
  private renew(): void {
    const until = this.clock() + SHARE_LEASE_MS;
    for (const [running, members] of this.heldSlots) {
      const pairs = [...members.keys()].flatMap((member) => [until, member]);
      // One transaction a set: a set written back never goes without its expiry.
      this.client
        .multi()
        .zadd(running, ...pairs)
        .pexpire(running, SHARE_KEY_TTL_MS)
        .exec()
        .then((replies) => {
          for (const [error] of replies ?? []) if (error) this.onError(error);
        })
        .catch(this.onError);
    }
  }

  /**
   * A waiter's look once its job has left the worker (delayed): true when `owner` has room now
   * and the job must be promoted; else the task is in line for the next release to wake.
   */
  async roomOrLine(owner: string | null, taskId: string, limit: number, order: number): Promise<boolean> {
    const reply = await STAY_IN_LINE.run(this.client, this.keysOf(owner), [
      taskId,
      limit,
      this.clock(),
      order,
      SHARE_KEY_TTL_MS,
    ]);
    return Number(reply) === 1;
  }

  async close(): Promise<void> {
    clearInterval(this.renewer);
    this.heldSlots.clear();
    await this.queues.close();
  }

  /**
   * Frees `taskId`'s slot, if it holds one, on behalf of a run that cannot: a job that failed
   * for good after its worker was lost (its slot would otherwise wait for its lease to run out).
   */
  releaseFor(owner: string | null, taskId: string): Promise<void> {
    return this.releaseAndWake(owner, taskId);
  }

  /**
   * Frees the slot and wakes the head of the line. A head whose job is gone or was cancelled
   * (its data lost the share) would swallow the wake-up, so it is skipped for the next one. A
   * head still running (it is about to leave the worker) looks again itself once it has left.
   */
  private async releaseAndWake(owner: string | null, taskId: string): Promise<void> {
    const head = await RELEASE.run(this.client, this.keysOf(owner), [taskId, this.clock()]);
    if (typeof head === 'string') await this.wake(owner, head);
  }

  /** Wakes `head`, popped from `owner`'s line by a release; a stale head passes the wake-up on. */
  private async wake(owner: string | null, popped: string): Promise<void> {
    const keys = this.keysOf(owner);
    let head: unknown = popped;
    for (let skipped = 0; skipped <= MAX_SKIPPED_WAITERS; skipped++) {
      if (typeof head !== 'string') return;
      const job = await this.queues.of(head).getJob(head);
      if (job?.data.share) {
        await promoteIfDelayed(job);
        return;
      }
      head = await RELEASE.run(this.client, keys, ['', this.clock()]);
    }
  }

  private keysOf(owner: string | null): [string, string, string] {
    const shares = this.names.shares;
    return [shares.running(owner), shares.waiting(owner), shares.waitingAll(owner)];
  }
}

/**
 * Tasks waiting for some principal's share, across the app, one count per home shard (in the
 * order of `ShareNames.waitingAllKeys`): a count that failed (its master is lost) is its error. A
 * waiter re-enters the count each time it looks again, so an entry older than two looks is one
 * whose job was removed.
 */
export function countShareWaiters(
  client: RedisClient,
  names: RuntimeNames,
  now: number,
): Promise<PromiseSettledResult<number>[]> {
  return Promise.allSettled(
    names.shares.waitingAllKeys.map((key) => client.zcount(key, now - 2 * SHARE_RECHECK_MS, '+inf')),
  );
}

/** Promotes a delayed job; one that is not delayed (still leaving its worker, or already woken) is left alone. */
export async function promoteIfDelayed(job: Job<TaskJobData, unknown>): Promise<void> {
  await job.promote().catch(() => {
    // Not delayed: its worker looks again once the job has left, or it is already on its way.
  });
}
