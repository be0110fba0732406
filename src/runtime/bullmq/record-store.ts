/**
 * Task records in Redis: one hash per task (`record` JSON + `version`), expiring at
 * `createdAt + ttlMs` so retention is Redis expiry (no sweeper), and one sorted set per owner
 * for listing. A task's record and its entry in the owner's set live on the task's shard (see
 * keys.ts), so every script below touches the keys of one shard, hence one cluster slot.
 *
 * Every write is a compare-and-set on `version`: the new record is computed in JS with
 * `applyChange` (the one state machine; terminal stays sticky), and a Lua script stores it only
 * if nobody wrote in between, publishing `{ record }` in the same script. Redis runs
 * scripts one at a time and delivers a connection's messages in publish order, so every
 * subscriber sees a task's versions in the order they were written.
 */
import { TaskError } from '../../engine/errors.js';
import type { IdempotencyClaim, ListPage, ListPosition } from '../../engine/runtime.js';
import { expiresAt, isTerminal, type TaskRecord } from '../../engine/task.js';
import { applyChange, type TaskChange } from '../../engine/transitions.js';
import { followRecordExpiry } from './callback-index.js';
import type { RedisClient } from './connection.js';
import { cancelledJobData } from './jobs.js';
import type { RuntimeNames, ShardNames } from './keys.js';
import { LuaScript } from './lua-script.js';
import type { RecordCommand } from './record-fold.js';
import { SHARE_FIELD } from './share-field.js';

/** Dead ids an insert removes from its owner's index at most: bounded work per create. */
const PRUNE_BATCH = 100;

/** Marks a job hash `INSERT` made only to stop BullMQ adding a job for a refused id. */
const PLACEHOLDER_FIELD = 'mcpRefusedTask';
/** The placeholder only has to outlive the job insert sent right behind the refusal. */
const PLACEHOLDER_TTL_MS = 10_000;

/**
 * KEYS: record hash, live zset, job hash, idempotency claim, [owner zset, owner expiry zset].
 * ARGV: record JSON, expiry (ms, '' for never), createdAt, taskId, events channel, live-task
 * limit ('' for none), claim expiry ('' when the create is not idempotent; 'inf' for never),
 * prefix of record keys. Returns 1 stored, 0 the id is taken, -1 the owner has as many
 * unfinished tasks as the limit allows, or the id of the task that holds the claim (which is
 * still stored), and then stores nothing: check, claim and record in one script, so two racing
 * creates from any processes make one task. The claim key is on the new task's shard (see
 * `BullmqTaskRuntime.idForClaim`); the record it names is on the same shard, hence slot. It runs
 * inside the job insert's script (record-fold.ts), which adds no job when this refuses. (When
 * this refuses it also leaves a short-lived placeholder in the job's hash, from when the job
 * insert was a command of its own behind this one; a later insert that succeeds removes it.) The owner's sets live as long as their longest-lived member (TIME instead of a
 * client clock, so skew cannot shorten them); live members past their expiry are dropped
 * before counting. The expiry set scores the owner's ids by expiry, so every insert prunes (a
 * bounded batch of) dead ids by score: the index stays small for clients that never list.
 */
const INSERT_SOURCE = `
-- Adds a member to an owner's set, which then lives at least as long as that member.
local function add_kept_until(key, score, member, expiry)
  local ttl = redis.call('PTTL', key)
  redis.call('ZADD', key, score, member)
  if expiry == '' then
    redis.call('PERSIST', key)
  elseif ttl == -2 then
    redis.call('PEXPIREAT', key, expiry)
  elseif ttl >= 0 then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now + ttl < tonumber(expiry) then redis.call('PEXPIREAT', key, expiry) end
  end
end
-- Refused: keep the job insert right behind this from adding a job for this id.
local function refuse(code)
  if redis.call('EXISTS', KEYS[3]) == 0 then
    redis.call('HSET', KEYS[3], '${PLACEHOLDER_FIELD}', '1')
    redis.call('PEXPIRE', KEYS[3], ${PLACEHOLDER_TTL_MS})
  end
  return code
end
if ARGV[7] ~= '' then
  local holder = redis.call('GET', KEYS[4])
  if holder and redis.call('EXISTS', ARGV[8] .. holder) == 1 then
    refuse(0)
    return holder
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return refuse(0) end
if ARGV[6] ~= '' then
  local t = redis.call('TIME')
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (tonumber(t[1]) * 1000))
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return refuse(-1) end
end
if redis.call('HEXISTS', KEYS[3], '${PLACEHOLDER_FIELD}') == 1 then redis.call('DEL', KEYS[3]) end
if ARGV[7] == 'inf' then
  redis.call('SET', KEYS[4], ARGV[4])
elseif ARGV[7] ~= '' then
  redis.call('SET', KEYS[4], ARGV[4])
  redis.call('PEXPIREAT', KEYS[4], ARGV[7])
end
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'version', 1)
if ARGV[2] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
add_kept_until(KEYS[2], ARGV[2] == '' and '+inf' or ARGV[2], ARGV[4], ARGV[2])
if KEYS[5] then add_kept_until(KEYS[5], ARGV[3], ARGV[4], ARGV[2]) end
if KEYS[6] then
  if ARGV[2] ~= '' then redis.call('ZADD', KEYS[6], ARGV[2], ARGV[4]) end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local dead = redis.call('ZRANGE', KEYS[6], '-inf', now, 'BYSCORE', 'LIMIT', 0, ${PRUNE_BATCH})
  if #dead > 0 then
    redis.call('ZREM', KEYS[5], unpack(dead))
    redis.call('ZREM', KEYS[6], unpack(dead))
  end
  local kept = redis.call('PEXPIRETIME', KEYS[5])
  if kept > 0 then redis.call('PEXPIREAT', KEYS[6], kept) elseif kept == -1 then redis.call('PERSIST', KEYS[6]) end
end
redis.call('PUBLISH', ARGV[5], '{"record":' .. ARGV[1] .. '}')
return 1
`;

/**
 * KEYS: record hash, live zset, job hash, [owner zset]. ARGV: expected version, new record
 * JSON, events channel, new expiry (ms; '' keeps the current one), task id to drop from the
 * live set ('' when the task has not just ended), job data to put in place of the job's ('' to
 * leave it), [extra channel, extra message]. Returns 1 written, 0 gone (expired), -1 someone
 * wrote first. HSET keeps the key's expiry, so a write changes retention only when the
 * record's TTL changed (a SEP-1686 task ending), and then the owner set is kept alive at least
 * as long. A task leaves the live set in the write that ends it, so whoever hears of the end
 * can create again at once. A cancel replaces the job's data in the same script, so a worker
 * that takes the job afterwards finds no start snapshot in it and reads the record instead,
 * and removes the job's share from its hash (`SHARE_FIELD`), so that no script activating the
 * job takes a slot for a task that no longer counts against its owner's share.
 */
const COMPARE_AND_SET_SOURCE = `
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return 0 end
if version ~= ARGV[1] then return -1 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'version', tonumber(version) + 1)
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[2], ARGV[5]) end
if ARGV[4] ~= '' then
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  if KEYS[4] and redis.call('PEXPIRETIME', KEYS[4]) >= 0 and redis.call('PEXPIRETIME', KEYS[4]) < tonumber(ARGV[4]) then
    redis.call('PEXPIREAT', KEYS[4], ARGV[4])
  end
end
if ARGV[6] ~= '' and redis.call('HEXISTS', KEYS[3], 'data') == 1 then
  redis.call('HSET', KEYS[3], 'data', ARGV[6])
  redis.call('HDEL', KEYS[3], '${SHARE_FIELD}')
end
redis.call('PUBLISH', ARGV[3], '{"record":' .. ARGV[2] .. '}')
if ARGV[7] then redis.call('PUBLISH', ARGV[7], ARGV[8]) end
return 1
`;
const COMPARE_AND_SET = new LuaScript('mcpTaskCompareAndSet', COMPARE_AND_SET_SOURCE);

/**
 * The two record scripts as text, for the commands that run them inside BullMQ's own job
 * scripts (record-fold.ts): `INSERT` runs only that way, with the job insert.
 */
export const RECORD_SCRIPTS = { insert: INSERT_SOURCE, compareAndSet: COMPARE_AND_SET_SOURCE } as const;

/**
 * A place taken under the quota whose record is not there yet is a create in flight for this
 * long (far longer than a create's deadline); after it, a place with no record is one a crashed
 * create left behind, and a reconcile drops it.
 */
const CREATE_GRACE_MS = 30_000;

/**
 * The live-task quota of an app with several shards, on the owner's home shard (see keys.ts
 * `homeOf`). KEYS: the owner's live zset there, and the zset of places taken in the last
 * `CREATE_GRACE_MS` (scored by when; a reconcile leaves those alone). ARGV: task id, its expiry (ms, '' for never),
 * limit. Drops members past their expiry, then adds the task unless the owner already has
 * `limit` members: 1 taken, -1 refused, 0 the id holds a place already (a create of a task id
 * that exists: the insert refuses it, and the place stays the first task's). The set lives as
 * long as its longest-lived member.
 */
const TAKE_LIVE = new LuaScript(
  'mcpTaskTakeLive',
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ${CREATE_GRACE_MS})
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ${CREATE_GRACE_MS})
local ttl = redis.call('PTTL', KEYS[1])
redis.call('ZADD', KEYS[1], ARGV[2] == '' and '+inf' or ARGV[2], ARGV[1])
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[1])
elseif ttl == -2 or (ttl >= 0 and now + ttl < tonumber(ARGV[2])) then
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
return 1
`,
);

/**
 * The reconcile's look at one shard. KEYS: record hashes of that shard. Returns, for those
 * whose record is gone or has ended, `{ position (1-based), 1 ended / 0 gone }`.
 */
const ENDED_OR_GONE = new LuaScript(
  'mcpTaskEndedOrGone',
  `
local dead = {}
for index, key in ipairs(KEYS) do
  local json = redis.call('HGET', key, 'record')
  if not json then
    dead[#dead + 1] = { index, 0 }
  else
    local status = cjson.decode(json).status
    if status == 'completed' or status == 'failed' or status == 'cancelled' then dead[#dead + 1] = { index, 1 } end
  end
end
return dead
`,
);

/** Record hashes one reconcile script reads at most. */
const RECONCILE_BATCH = 200;
/**
 * Longest the release of a quota entry on the home shard is waited for: a worker's connection
 * waits out outages, and a lost release only costs a slot until the next reconcile.
 */
const HOME_RELEASE_DEADLINE_MS = 2000;

/** A write loses the race to another writer this often before we call it a bug. */
const MAX_WRITE_CONFLICTS = 100;

/** The engine's DUPLICATE_TASK error, recognisable here so a failed create leaves the other task alone. */
export class DuplicateTaskError extends TaskError {
  override readonly name: string = 'DuplicateTaskError';
  constructor(readonly taskId: string) {
    super('DUPLICATE_TASK', `Task ID already exists: ${taskId}`);
  }
}

export interface StoredRecord {
  readonly record: TaskRecord;
  readonly version: string;
}

export interface WriteResult extends StoredRecord {
  /** False when the change was dropped: the task was already terminal or the caller declined. */
  readonly changed: boolean;
}

/** Decides the change from the freshest record; `undefined` leaves the record alone. */
export type ChangeDecision = TaskChange | ((current: TaskRecord) => TaskChange | undefined);

/**
 * The live-task quota of a create: `max`, and either the room the insert script checks
 * atomically (one shard: the owner's live set is on the task's shard) or, with several shards,
 * the shard where `roomFor` already took the task's place (`taken`), which must be given back
 * if the insert stores nothing.
 */
export interface LiveRoom {
  readonly max: number;
  readonly room?: number;
  readonly taken?: ShardNames;
}

export class RedisTaskStore {
  constructor(
    private readonly client: RedisClient,
    private readonly names: RuntimeNames,
    private readonly clock: () => number = Date.now,
  ) {
    for (const script of [COMPARE_AND_SET, TAKE_LIVE, ENDED_OR_GONE]) script.define(client);
  }

  /** Reconciles in flight, by owner's live key: concurrent refusals share one. */
  private readonly reconciling = new Map<string, Promise<number>>();

  /**
   * The live-task quota for `record` (`undefined` without one); throws LIMIT_EXCEEDED when the
   * owner has `maxLiveForOwner` unfinished tasks. On one shard this reads nothing: the insert
   * script checks the owner's live set atomically. On several, the owner's live set is on its
   * home shard (`homeOf`), and this takes the task's place there in one script before the insert
   * is sent (the insert must be sent at once, and cannot touch another slot). A refusal first
   * reconciles the set (drops tasks that ended or were never stored; see `reconcileLive`) and
   * tries once more. Only the owner's home and the task's shard are needed, never every shard.
   */
  async roomFor(record: TaskRecord, maxLiveForOwner: number | undefined): Promise<LiveRoom | undefined> {
    if (maxLiveForOwner === undefined) return undefined;
    if (this.names.shards.length === 1) return { max: maxLiveForOwner, room: maxLiveForOwner };
    const home = this.names.homeOf(record.owner);
    const take = () =>
      TAKE_LIVE.run(
        this.client,
        [home.live(record.owner, record.liveBudget), takenKey(home, record.owner, record.liveBudget)],
        [record.taskId, expiryArgument(expiresAt(record)), maxLiveForOwner],
      );
    let taken: unknown;
    try {
      taken = await take();
      if (taken === -1) {
        // Always once more, even when the reconcile dropped nothing: a release may have landed
        // between the refusal and the reconcile's read.
        await this.reconcileLive(record.owner, record.liveBudget);
        taken = await take();
      }
      if (taken === -1) {
        throw new TaskError('LIMIT_EXCEEDED', `The owner already has ${maxLiveForOwner} unfinished tasks`);
      }
    } catch (error) {
      if (error instanceof TaskError) throw error;
      throw new TaskError(
        'RUNTIME_UNAVAILABLE',
        `The task store (Redis) failed while trying to count the caller's live tasks on its home shard ${home.queue} (where its live-task quota is kept): ${errorText(error)}`,
        { cause: error },
      );
    }
    return taken === 1 ? { max: maxLiveForOwner, taken: home } : { max: maxLiveForOwner };
  }

  /**
   * Gives back the place `roomFor` took when the insert stored nothing (a duplicate id, a held
   * idempotency claim, a failure); best effort, a place left behind goes at the next reconcile.
   */
  async releaseRoom(record: TaskRecord, quota: LiveRoom | undefined): Promise<void> {
    if (!quota?.taken) return;
    await this.releaseOnHome(quota.taken, record.owner, record.liveBudget, record.taskId);
  }

  /**
   * Drops from the owner's live set on its home shard the tasks that ended or whose record is
   * gone (a release lost with a crash or a lost master; a create that died between taking its
   * place and storing its record), reading each task's record on its own shard. Returns how
   * many it dropped. A place with no record taken less than `CREATE_GRACE_MS` ago is a create
   * in flight and stays; a create slower than that (none is: its deadline is seconds) could be
   * dropped and overshoot the quota by itself. Run on a refusal (cost: the owner's live ids, at
   * most the quota, read once), one at a time per owner and process.
   */
  async reconcileLive(owner: string | null, liveBudget?: string): Promise<number> {
    const home = this.names.homeOf(owner);
    const key = home.live(owner, liveBudget);
    let running = this.reconciling.get(key);
    if (!running) {
      running = this.reconcileNow(key, takenKey(home, owner, liveBudget)).finally(() => this.reconciling.delete(key));
      this.reconciling.set(key, running);
    }
    return running;
  }

  private async reconcileNow(key: string, taken: string): Promise<number> {
    const [ids, young] = await Promise.all([
      this.client.zrange(key, '0', '-1'),
      this.client.zrangebyscore(taken, Date.now() - CREATE_GRACE_MS, '+inf'),
    ]);
    const inFlight = new Set(young);
    const byShard = new Map<ShardNames, string[]>();
    for (const taskId of ids) {
      const shard = this.names.shardOf(taskId);
      const list = byShard.get(shard) ?? [];
      list.push(taskId);
      byShard.set(shard, list);
    }
    const dead: string[] = [];
    await Promise.all(
      [...byShard].flatMap(([shard, shardIds]) => {
        const batches: string[][] = [];
        for (let from = 0; from < shardIds.length; from += RECONCILE_BATCH) {
          batches.push(shardIds.slice(from, from + RECONCILE_BATCH));
        }
        return batches.map(async (batch) => {
          const replies = (await ENDED_OR_GONE.run(
            this.client,
            batch.map((taskId) => shard.record(taskId)),
            [],
          )) as [number, number][];
          for (const [position, ended] of replies) {
            const taskId = batch[position - 1] as string;
            // No record yet, its place taken just now: a create in flight, which keeps it.
            if (ended === 1 || !inFlight.has(taskId)) dead.push(taskId);
          }
        });
      }),
    );
    if (dead.length > 0) await this.client.zrem(key, ...dead);
    return dead.length;
  }

  /** Removes `taskId` from its owner's live set on the home shard `home`, within a bound. */
  private async releaseOnHome(
    home: ShardNames,
    owner: string | null,
    liveBudget: string | undefined,
    taskId: string,
  ): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, HOME_RELEASE_DEADLINE_MS);
      timer.unref();
    });
    try {
      await Promise.race([this.client.zrem(home.live(owner, liveBudget), taskId).then(() => undefined), bound]);
    } catch {
      // The home shard is lost or slow: the entry goes at the next reconcile (or its expiry).
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The `INSERT` script's keys and arguments for a new record (`quota` from `roomFor`), for the
   * command that runs it with the job insert in one script (see record-fold.ts): the record is
   * stored before the job exists, and a refusal adds no job. Its reply goes to `inserted`.
   */
  insertCommand(record: TaskRecord, quota: LiveRoom | undefined, claim?: IdempotencyClaim): RecordCommand {
    return { keys: this.insertKeys(record, claim), args: this.insertArgs(record, quota, claim) };
  }

  private insertKeys(record: TaskRecord, claim: IdempotencyClaim | undefined): string[] {
    const shard = this.names.shardOf(record.taskId);
    const keys = [
      shard.record(record.taskId),
      shard.live(record.owner, record.liveBudget),
      shard.job(record.taskId),
      // Always a key of this shard, so the script's keys stay in one slot; unused without a claim.
      shard.idempotency(claim?.claim ?? ''),
    ];
    if (record.owner !== null) keys.push(shard.owner(record.owner), shard.ownerExpiries(record.owner));
    return keys;
  }

  private insertArgs(
    record: TaskRecord,
    quota: LiveRoom | undefined,
    claim: IdempotencyClaim | undefined,
  ): (string | number)[] {
    const claimExpiry =
      claim === undefined ? '' : Number.isFinite(claim.expiresAt) ? Math.floor(claim.expiresAt) : 'inf';
    return [
      JSON.stringify(record),
      expiryArgument(expiresAt(record)),
      record.createdAt,
      record.taskId,
      this.names.eventsChannel,
      quota?.room ?? '',
      claimExpiry,
      this.names.shardOf(record.taskId).recordPrefix,
    ];
  }

  /**
   * The id of the task holding `claim`, for a create that stops before `INSERT` (which checks
   * the claim itself, atomically). `undefined` when nobody holds it.
   */
  async holderOf(record: TaskRecord, claim: IdempotencyClaim): Promise<string | undefined> {
    return (await this.client.get(this.names.shardOf(record.taskId).idempotency(claim.claim))) ?? undefined;
  }

  /** Removes a record whose creation failed half-way. */
  async discard(record: TaskRecord): Promise<void> {
    const shard = this.names.shardOf(record.taskId);
    const pipeline = this.client
      .multi()
      .del(shard.record(record.taskId))
      .zrem(shard.live(record.owner, record.liveBudget), record.taskId);
    if (record.owner !== null) {
      pipeline.zrem(shard.owner(record.owner), record.taskId);
      pipeline.zrem(shard.ownerExpiries(record.owner), record.taskId);
    }
    const home = this.names.homeOf(record.owner);
    await Promise.all([
      pipeline.exec(),
      home === shard || this.names.shards.length === 1
        ? undefined
        : this.releaseOnHome(home, record.owner, record.liveBudget, record.taskId),
    ]);
  }

  async read(taskId: string): Promise<StoredRecord | undefined> {
    const [version, json] = await this.client.hmget(this.names.record(taskId), 'version', 'record');
    if (version == null || json == null) return undefined;
    return { version, record: JSON.parse(json) as TaskRecord };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    return (await this.read(taskId))?.record;
  }

  /**
   * The record and whether its BullMQ job holds a lock (a live worker runs it), in one round
   * trip: what a client's read needs to tell a running task from one whose worker was lost.
   */
  async readWithLock(taskId: string): Promise<{ record: TaskRecord; lockHeld: boolean } | undefined> {
    const replies = await this.client
      .pipeline()
      .hget(this.names.record(taskId), 'record')
      .exists(this.names.jobLock(taskId))
      .exec();
    const [[readError, json], [lockError, locks]] = replies as [[Error | null, unknown], [Error | null, unknown]];
    if (readError) throw readError;
    if (lockError) throw lockError;
    if (typeof json !== 'string') return undefined;
    return { record: JSON.parse(json) as TaskRecord, lockHeld: Number(locks) > 0 };
  }

  /**
   * Applies a change through `applyChange` with compare-and-set, re-reading after a lost race.
   * A change the state machine refuses because the task already ended is dropped, not thrown:
   * that is how a late outcome after a cancel disappears. `undefined` when the task is gone.
   * `notify` is published in the same script as the write (used for cancel requests). A
   * writer that holds the result of its own last write passes it as `known` to skip the read;
   * if someone wrote since, the version check fails and the record is read as usual. `write`
   * runs each compare-and-set attempt in place of the script alone (the outcome of a job goes
   * in the command that completes it: see record-fold.ts); it resolves as the script does.
   */
  async update(
    taskId: string,
    decide: ChangeDecision,
    notify?: { readonly channel: string; readonly message: string },
    known?: StoredRecord,
    write: (command: RecordCommand) => Promise<unknown> = (command) =>
      COMPARE_AND_SET.run(this.client, command.keys, command.args),
  ): Promise<WriteResult | undefined> {
    let guess = known;
    for (let attempt = 0; attempt < MAX_WRITE_CONFLICTS; attempt++) {
      const current = guess ?? (await this.read(taskId));
      guess = undefined;
      if (!current) return undefined;
      const change = typeof decide === 'function' ? decide(current.record) : decide;
      if (!change) return { ...current, changed: false };
      let next: TaskRecord;
      try {
        next = applyChange(current.record, change, this.clock());
      } catch (error) {
        if (error instanceof TaskError && error.code === 'TASK_TERMINAL') return { ...current, changed: false };
        throw error;
      }
      const retention = next.ttlMs === current.record.ttlMs ? '' : expiryArgument(expiresAt(next));
      const ends = isTerminal(next.status) && !isTerminal(current.record.status);
      const args = [
        current.version,
        JSON.stringify(next),
        this.names.eventsChannel,
        String(retention),
        ends ? taskId : '',
        // A job that has not started yet must not start from its snapshot of a live task.
        ends && next.status === 'cancelled' ? cancelledJobData(next) : '',
      ];
      if (notify) args.push(notify.channel, notify.message);
      const shard = this.names.shardOf(taskId);
      const keys = [shard.record(taskId), shard.live(next.owner, next.liveBudget), shard.job(taskId)];
      if (retention !== '' && next.owner !== null) keys.push(shard.owner(next.owner));
      const written = await write({ keys, args });
      if (written === 1) {
        // The task's place under its owner's quota: on the home shard, another slot than this
        // script's (several shards only). Released after the end is written, so a failure here
        // leaves a place the next reconcile drops, never a live task uncounted.
        const home = ends ? this.names.homeOf(next.owner) : shard;
        if (home !== shard) await this.releaseOnHome(home, next.owner, next.liveBudget, taskId);
        // A new expiry (a keepAlive at the end) holds for the hooks' token index too.
        if (retention !== '' && next.callbacks) await followRecordExpiry(this.client, this.names, next);
        // The script increments the version by one on every write.
        return { record: next, version: String(Number(current.version) + 1), changed: true };
      }
      if (written === 0) return undefined;
    }
    throw new Error(`Task ${taskId}: gave up after ${MAX_WRITE_CONFLICTS} conflicting writes`);
  }

  /**
   * One page of `owner`'s tasks ordered by (createdAt, taskId), across every shard: each shard
   * gives its first `limit` after the position (in parallel), and the merge keeps the first
   * `limit` of all. The page is complete because no shard can hold one of the first `limit`
   * overall beyond its own first `limit`. A listing needs every shard: when one does not answer
   * (its master is lost), it fails with RUNTIME_UNAVAILABLE naming the shards it could not read,
   * rather than return a page (and a cursor past it) that leaves their tasks out unsaid.
   */
  async list(owner: string, limit: number, after?: ListPosition): Promise<ListPage> {
    const shards = this.names.shards;
    if (shards.length === 1) return this.listShard(shards[0] as ShardNames, owner, limit, after);
    const settled = await Promise.allSettled(shards.map((shard) => this.listShard(shard, owner, limit, after)));
    const lost = settled.flatMap((result, index) =>
      result.status === 'rejected' ? [`${shards[index]?.queue} (${errorText(result.reason)})`] : [],
    );
    if (lost.length > 0) {
      throw new TaskError(
        'RUNTIME_UNAVAILABLE',
        `The task store (Redis) could not list tasks: ${lost.length} of ${shards.length} shards did not answer: ${lost.join(', ')}`,
      );
    }
    const pages = settled.map((result) => (result as PromiseFulfilledResult<ListPage>).value);
    const merged = pages.flatMap((page) => page.records).sort(compareListOrder);
    const records = merged.slice(0, limit);
    const more = merged.length > limit || pages.some((page) => page.next !== undefined);
    const last = records.at(-1);
    return more && last ? { records, next: { createdAt: last.createdAt, taskId: last.taskId } } : { records };
  }

  /**
   * One shard's page. Redis orders equal scores by member bytes, which is the same order as
   * comparing base64url ids as strings. Members whose record expired are removed as they are
   * met, so the set does not grow with dead ids.
   */
  private async listShard(shard: ShardNames, owner: string, limit: number, after?: ListPosition): Promise<ListPage> {
    const key = shard.owner(owner);
    const records: TaskRecord[] = [];
    const batch = Math.max(limit + 1, 16);
    let offset = 0;
    for (;;) {
      // Scores start at `after.createdAt` inclusive; ids at that same instant are filtered below.
      const entries = await this.client.zrange(
        key,
        after ? String(after.createdAt) : '-inf',
        '+inf',
        'BYSCORE',
        'LIMIT',
        offset,
        batch,
        'WITHSCORES',
      );
      if (entries.length === 0) return { records };
      offset += entries.length / 2;
      const ids: string[] = [];
      for (let index = 0; index < entries.length; index += 2) {
        const taskId = entries[index] as string;
        const createdAt = Number(entries[index + 1]);
        if (after && createdAt === after.createdAt && taskId <= after.taskId) continue;
        ids.push(taskId);
      }
      const pipeline = this.client.pipeline();
      for (const taskId of ids) pipeline.hget(shard.record(taskId), 'record');
      const replies = (await pipeline.exec()) ?? [];
      const expired: string[] = [];
      for (const [index, [error, json]] of replies.entries()) {
        if (error) throw error;
        if (typeof json !== 'string') {
          expired.push(ids[index] as string);
          continue;
        }
        if (records.length === limit) {
          await this.forget(shard, owner, expired);
          const last = records.at(-1) as TaskRecord;
          return { records, next: { createdAt: last.createdAt, taskId: last.taskId } };
        }
        records.push(JSON.parse(json) as TaskRecord);
      }
      await this.forget(shard, owner, expired);
      // Removed members shifted the ranks after them down.
      offset -= expired.length;
    }
  }

  private async forget(shard: ShardNames, owner: string, taskIds: readonly string[]): Promise<void> {
    if (taskIds.length === 0) return;
    await this.client
      .multi()
      .zrem(shard.owner(owner), ...taskIds)
      .zrem(shard.ownerExpiries(owner), ...taskIds)
      .exec();
  }
}

/**
 * What `INSERT` did: stored the record, or found the idempotency claim held by `holder` (and
 * stored nothing).
 */
export type Inserted = { readonly stored: true } | { readonly stored: false; readonly holder: string };

/** Throws for what `INSERT` refused: 1 stored, 0 the id is taken, -1 the quota is used up. */
export function checkInserted(inserted: unknown, record: TaskRecord, quota: LiveRoom | undefined): Inserted {
  if (typeof inserted === 'string') return { stored: false, holder: inserted };
  if (inserted === -1) {
    throw new TaskError('LIMIT_EXCEEDED', `The owner already has ${quota?.max} unfinished tasks`);
  }
  if (inserted !== 1) throw new DuplicateTaskError(record.taskId);
  return { stored: true };
}

/** The listing order: createdAt, then task id as a string (Redis's order for equal scores). */
function compareListOrder(a: TaskRecord, b: TaskRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;
}

/** The places under `owner`'s quota taken in the last `CREATE_GRACE_MS`, next to its live set (same slot). */
function takenKey(home: ShardNames, owner: string | null, liveBudget?: string): string {
  return `${home.live(owner, liveBudget)}:taken`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function expiryArgument(expiry: number): string | number {
  return Number.isFinite(expiry) ? Math.floor(expiry) : '';
}
