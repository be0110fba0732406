/**
 * Names of everything the runtime keeps in Redis, and which shard a task lives on.
 *
 * An app's tasks are spread over `shardCount` BullMQ queues (shards). Each shard's queue name
 * carries a Redis Cluster hash tag: `{tasks}` for one shard, `{tasks.0}`, `{tasks.1.3}`, … for
 * more (see `shardTag`). Every key of a shard contains that tag, so BullMQ's keys
 * (`<prefix>:{tasks.0}:…`) and ours (`<prefix>::{tasks.0}:…`) hash to one cluster slot, and
 * every Lua script (BullMQ's and ours) touches keys of one slot only. On a single Redis the
 * tags are just part of the name.
 *
 * Our keys live under `<prefix>::<queue>:…`: a queue name is never empty, so the double colon
 * cannot collide with any BullMQ key (BullMQ's Relay uses the same trick), and one
 * `SCAN <prefix>:*` still finds every key of an app.
 *
 * A task's shard is a pure function of its id (`shardOf`), so any process finds the record and
 * the job of any task without a lookup. Changing the shard count of an app with tasks in
 * flight therefore strands them: the count is part of the app's deployment, like its prefix.
 */
import { createHash } from 'node:crypto';

/** The keys of one shard: one BullMQ queue, the records of its tasks, its owners' indexes. */
export interface ShardNames {
  /** 0-based position among the app's shards. */
  readonly index: number;
  /** The BullMQ queue name, hash tag included (`{tasks}` or `{tasks.2}`); the task id is the job id. */
  readonly queue: string;
  /** Hash `{ record: JSON, version: n }` of one task; expires at `createdAt + ttlMs`. */
  record(taskId: string): string;
  /** Sorted set of an owner's task ids on this shard, scored by `createdAt`. */
  owner(owner: string): string;
  /** The same ids scored by expiry, so dead entries are pruned by score on every insert. */
  ownerExpiries(owner: string): string;
  /**
   * Sorted set of an owner's (anonymous: `null`) unfinished task ids, scored by their expiry.
   * On the owner's home shard (`RuntimeNames.homeOf`) it holds every unfinished task of the
   * owner, whatever its shard: the live-task quota counts it there. Elsewhere it holds the
   * owner's unfinished tasks of this shard, and nothing counts it. An anonymous task with a
   * `liveBudget` (its address's) counts in that budget's set instead.
   */
  live(owner: string | null, liveBudget?: string): string;
  /** BullMQ's hash of the task's job (the job id is the task id). */
  job(taskId: string): string;
  /** BullMQ's lock on a running job (present while a live worker renews it). */
  jobLock(taskId: string): string;
  /** Set (NX) by the one process that reports the task's expiry; outlives the record briefly. */
  expiryReport(taskId: string): string;
  /**
   * The task id holding an idempotency claim, until the claim's window ends. Kept on the
   * shard of the task it names, so one script takes the claim and stores the record.
   */
  idempotency(claim: string): string;
  /** The prefix of `record(taskId)`: a script reads the record of the id a claim names. */
  readonly recordPrefix: string;
}

export interface RuntimeNames {
  /** BullMQ's key prefix, shared with every Queue/Worker of the app. */
  readonly prefix: string;
  /** The queue name the app chose (without hash tag or shard number). */
  readonly queue: string;
  readonly shards: readonly ShardNames[];
  /** The shard that holds `taskId`'s record and job. */
  shardOf(taskId: string): ShardNames;
  /** Shorthand for `shardOf(taskId).record(taskId)`. */
  record(taskId: string): string;
  /** Shorthand for `shardOf(taskId).jobLock(taskId)`. */
  jobLock(taskId: string): string;
  /**
   * The owner's home shard: where its live-task quota and its fair share are kept, so that a
   * create needs only the task's shard and the owner's home, never every shard. A pure
   * function of the owner (anonymous callers share one home); the first shard on one shard.
   */
  homeOf(owner: string | null): ShardNames;
  /**
   * Pub/sub: every record write, as `{ record }` (the version before is not sent: nothing needs it). Channels are not keys: a script on
   * any shard may publish to them, and Redis Cluster delivers to subscribers on every node.
   */
  readonly eventsChannel: string;
  /** Pub/sub: ids of tasks whose running work must stop, for the workers. */
  readonly cancelChannel: string;
  /** Pub/sub: ids of tasks that got answers, for workers holding a run open for them. */
  readonly answersChannel: string;
  /** The keys of the principals' fair shares (see `ShareNames`). */
  readonly shares: ShareNames;
  /** The keys of resumed tasks waiting for their tool's version (see `VersionWaitNames`). */
  readonly versionWaits: VersionWaitNames;
  /**
   * Sorted set of the leases one holder (a caller's budget key) has on one cap (`sessions`,
   * `listen`, `blocking`), each `processId:slotId` scored by when it runs out (see
   * `RedisSlotLedger`). Hash tag `{<queue>.slots.<digest of holder>}`: every cap of one caller
   * lives in one cluster slot, and callers spread over the cluster.
   */
  slotLeases(cap: string, holder: string): string;
  /**
   * Sorted set of the task ids parked for `reason` (`input`, `sleep`), scored by when the park
   * ends, across every shard (hash tag `{tasks.parked}`): the `mcp_task_parked_tasks` gauge
   * counts it (see parked-tasks.ts).
   */
  parked(reason: string): string;
  /**
   * `{ taskId, key }` of the callback hook whose token has this SHA-256 digest (base64url),
   * until the task expires. No hash tag: each is read and written alone, and spreads over the
   * cluster; the token itself is never part of a key.
   */
  callbackToken(digest: string): string;
}

export const DEFAULT_PREFIX = 'mcp';
export const DEFAULT_QUEUE = 'tasks';
export const DEFAULT_SHARDS = 1;
/** A bound, not a recommendation: each shard costs every worker process a blocking connection. */
export const MAX_SHARDS = 64;

export function runtimeNames(
  prefix = DEFAULT_PREFIX,
  queue = DEFAULT_QUEUE,
  shardCount = DEFAULT_SHARDS,
): RuntimeNames {
  if (prefix === '' || queue === '') throw new Error('The Redis prefix and the queue name must not be empty');
  if (/[:{}]/.test(queue)) {
    throw new Error(`The queue name must not contain ':', '{' or '}' (got ${JSON.stringify(queue)})`);
  }
  if (/[{}]/.test(prefix)) {
    // A brace in the prefix would become the hash tag of every key and put all shards in one slot.
    throw new Error(`The Redis prefix must not contain '{' or '}' (got ${JSON.stringify(prefix)})`);
  }
  checkShardCount(shardCount);
  const shards = Array.from({ length: shardCount }, (_, index) =>
    shardNames(prefix, shardCount === 1 ? `{${queue}}` : `{${shardTag(queue, index, shardCount)}}`, index),
  );
  const channelBase = `${prefix}::${queue}`;
  const shardOf = (taskId: string): ShardNames => shards[shardIndexOf(taskId, shardCount)] as ShardNames;
  // `o:` keeps a principal named like the anonymous home apart from it.
  const homeOf = (owner: string | null): ShardNames =>
    shards[owner === null ? 0 : shardIndexOf(`o:${owner}`, shardCount)] as ShardNames;
  return {
    prefix,
    queue,
    shards,
    shardOf,
    record: (taskId) => shardOf(taskId).record(taskId),
    jobLock: (taskId) => shardOf(taskId).jobLock(taskId),
    homeOf,
    eventsChannel: `${channelBase}:events`,
    cancelChannel: `${channelBase}:cancel`,
    answersChannel: `${channelBase}:answers`,
    shares: shareNames(prefix, queue, shards, homeOf),
    versionWaits: versionWaitNames(prefix, queue, shards, shardOf),
    slotLeases: (cap, holder) => {
      // A digest, not the holder itself: a principal is the client's text, of any length and any braces.
      const tag = createHash('sha256').update(holder).digest('base64url').slice(0, 22);
      return `${prefix}::{${queue}.slots.${tag}}:${cap}`;
    },
    parked: (reason) => `${prefix}::{${queue}.parked}:${reason}`,
    callbackToken: (digest) => `${channelBase}:callback:${digest}`,
  };
}

/**
 * The keys of fair shares between principals. A principal's tasks are spread over every shard,
 * so its share keys live apart from them, in one slot: one script touches a principal's running
 * set and waiting line together wherever its tasks' jobs live. On one shard that slot is
 * `{tasks.shares}`; on several it is the owner's home shard (`RuntimeNames.homeOf`), so a lost
 * master stops the shares of the principals homed there only.
 */
export interface ShareNames {
  /** Sorted set of the owner's running task ids, scored by when their lease runs out. */
  running(owner: string | null): string;
  /** Sorted set of the owner's task ids waiting for its share, scored by creation (first come first). */
  waiting(owner: string | null): string;
  /**
   * Sorted set of every task id waiting for a share, scored by when it last waited (for the
   * gauge): the one in the slot of `owner`'s keys.
   */
  waitingAll(owner: string | null): string;
  /** Every `waitingAll` set of the app (one per home shard), for counting. */
  readonly waitingAllKeys: readonly string[];
  /**
   * The parts the three names above are made of, for the script that takes a share's slot as
   * it activates a job (record-fold.ts), which builds them in Lua: `base .. ':running:' ..
   * part`, `base .. ':waiting:' .. part`, `base .. ':waiting-all'`, where `base` is
   * `bases[homeIndex(owner)]` and `part` is `ownerPart(owner)`.
   */
  readonly bases: readonly string[];
  homeIndex(owner: string | null): number;
  ownerPart(owner: string | null): string;
}

function shareNames(
  prefix: string,
  queue: string,
  shards: readonly ShardNames[],
  homeOf: (owner: string | null) => ShardNames,
): ShareNames {
  const bases =
    shards.length === 1 ? [`${prefix}::{${queue}.shares}`] : shards.map((shard) => `${prefix}::${shard.queue}:shares`);
  const homeIndex = (owner: string | null) => (shards.length === 1 ? 0 : homeOf(owner).index);
  const baseOf = (owner: string | null) => bases[homeIndex(owner)] as string;
  // Anonymous callers share one share; `o:` keeps a principal named "anonymous" apart from them.
  const ownerPart = (owner: string | null) => (owner === null ? 'anonymous' : `o:${owner}`);
  return {
    running: (owner) => `${baseOf(owner)}:running:${ownerPart(owner)}`,
    waiting: (owner) => `${baseOf(owner)}:waiting:${ownerPart(owner)}`,
    waitingAll: (owner) => `${baseOf(owner)}:waiting-all`,
    waitingAllKeys: bases.map((base) => `${base}:waiting-all`),
    bases,
    homeIndex,
    ownerPart,
  };
}

/**
 * The keys of resumed tasks waiting for a worker with their tool's version: a worker with that
 * version finds them there and wakes them. On one shard they have a hash tag of their own
 * (`{tasks.versions}`); on several, each shard keeps the waits of its own tasks (in its slot),
 * so a lost master stops the waits of its shard only. `shard` is the 0-based shard index.
 */
export interface VersionWaitNames {
  /** Sorted set of the shard's task ids waiting for `tool` at `version`, scored by when they last waited. */
  waiting(shard: number, tool: string, version: string): string;
  /** Sorted set of every task id of the shard waiting for a version, scored by when it last waited (for the gauge). */
  waitingAll(shard: number): string;
  /** The version of the worker that just woke `taskId` to take it (short-lived; on the task's shard). */
  claim(taskId: string): string;
}

function versionWaitNames(
  prefix: string,
  queue: string,
  shards: readonly ShardNames[],
  shardOf: (taskId: string) => ShardNames,
): VersionWaitNames {
  const baseOf = (shard: number) =>
    shards.length === 1
      ? `${prefix}::{${queue}.versions}`
      : `${prefix}::${(shards[shard] as ShardNames).queue}:versions`;
  // Tool names hold no `@` (see the generator's tool-name rule), so `tool@version` is unambiguous.
  return {
    waiting: (shard, tool, version) => `${baseOf(shard)}:waiting:${tool}@${version}`,
    waitingAll: (shard) => `${baseOf(shard)}:waiting-all`,
    claim: (taskId) => `${baseOf(shardOf(taskId).index)}:claim:${taskId}`,
  };
}

export function checkShardCount(shardCount: number): void {
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > MAX_SHARDS) {
    throw new RangeError(`shards must be a whole number from 1 to ${MAX_SHARDS}, got ${String(shardCount)}`);
  }
}

function shardNames(prefix: string, queue: string, index: number): ShardNames {
  const base = `${prefix}::${queue}`;
  return {
    index,
    queue,
    record: (taskId) => `${base}:task:${taskId}`,
    owner: (owner) => `${base}:owner:${owner}`,
    ownerExpiries: (owner) => `${base}:owner-expiry:${owner}`,
    live: (owner, liveBudget) =>
      owner !== null
        ? `${base}:live:${owner}`
        : liveBudget === undefined
          ? `${base}:live-anonymous`
          : `${base}:live-anonymous:${liveBudget}`,
    job: (taskId) => `${prefix}:${queue}:${taskId}`,
    jobLock: (taskId) => `${prefix}:${queue}:${taskId}:lock`,
    expiryReport: (taskId) => `${base}:expired:${taskId}`,
    idempotency: (claim) => `${base}:idempotency:${claim}`,
    recordPrefix: `${base}:task:`,
  };
}

/** Redis Cluster's slot count: a key's slot is CRC16(hash tag) mod 16384. */
const CLUSTER_SLOTS = 16_384;

/**
 * The hash tag of shard `index` of `count`: `<queue>.<index>`, or `<queue>.<index>.<k>` with
 * the smallest `k` that puts its slot in the `index`-th of `count` equal slot ranges. A
 * cluster made with `redis-cli --cluster create` gives its masters equal contiguous ranges, so
 * with as many shards as masters (or a multiple) every master gets its share, which plain
 * names would leave to chance. Deterministic: every process computes the same tags.
 */
export function shardTag(queue: string, index: number, count: number): string {
  const from = Math.ceil((index * CLUSTER_SLOTS) / count);
  const to = Math.ceil(((index + 1) * CLUSTER_SLOTS) / count);
  for (let attempt = 0; ; attempt++) {
    const tag = attempt === 0 ? `${queue}.${index}` : `${queue}.${index}.${attempt}`;
    const slot = clusterSlotOf(tag);
    // Each try lands in range with probability 1/count; a few thousand tries always suffice.
    if ((slot >= from && slot < to) || attempt === 100_000) return tag;
  }
}

/** The cluster slot of a hash tag: CRC16-XMODEM of its UTF-8 bytes, mod 16384 (as Redis does). */
export function clusterSlotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}

/**
 * The shard of a task id: 32-bit FNV-1a over the id's UTF-16 code units, modulo the count.
 * Stable across processes, versions and platforms (it is part of where data lives), cheap, and
 * even enough for random ids; never derived from anything but the id.
 */
export function shardIndexOf(taskId: string, shardCount: number): number {
  if (shardCount === 1) return 0;
  let hash = 0x811c9dc5;
  for (let index = 0; index < taskId.length; index++) {
    hash ^= taskId.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shardCount;
}
