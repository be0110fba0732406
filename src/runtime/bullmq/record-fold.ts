/**
 * The task record folded into BullMQ's own scripts, through BullMQ's queue-backend extension
 * point (`BackendFactory`): the backend is BullMQ's Redis backend, with two of its commands
 * replaced, when the runtime asks for it, by one Lua script that runs our record script and
 * then BullMQ's own script text, unchanged, in the same call:
 *
 * - **create**: the record's `INSERT` and BullMQ's job insert, whichever of its four scripts
 *   BullMQ picks (`addStandardJob`, `addPrioritizedJob`, `addDelayedJob` for a job with a
 *   delay, `addParentJob` for a job that waits for children in a flow). An
 *   insert that refuses (duplicate id, quota, idempotency claim held) returns before BullMQ's
 *   part, so no job exists without its record and no refused create adds a job, for any id.
 *   The job's start snapshot (see jobs.ts) is the record JSON the insert already carries,
 *   spliced into the job data in Lua, so the record is serialised and sent once.
 * - **outcome**: the record's compare-and-set and BullMQ's `moveToFinished`. A lost race (or an
 *   expired record) returns before BullMQ's part; the writer re-reads and tries again, and the
 *   job is completed only together with the write that records its outcome.
 *
 * - **activation** (one Redis only, when the worker asks for it): BullMQ's `moveToActive`, and
 *   the fetch of the next job inside `moveToFinished`, then the fair share's take for the job
 *   just activated, whose share the create wrote into the job's hash (`SHARE_FIELD`): the slot
 *   is taken, or the task put in its owner's line, in the same script, and the worker learns
 *   which from `takenAtActivation` (see `SHARE_TAKE_SCRIPT` in principal-shares.ts).
 *
 * So a no-op task costs the two commands a bare BullMQ job costs (add, finish-and-fetch-next),
 * where it cost four, with the default fair share too on one Redis. The scripts keep BullMQ's keys and arguments first, at the positions its
 * text expects, and ours after them (handed to our script as its own `KEYS`/`ARGV`). The key
 * and argument counts of BullMQ's scripts are checked when the fold is built and on every call:
 * a BullMQ whose scripts take other counts fails loudly rather than misplace an argument.
 */
import type { BackendFactory, RedisQueueBackend } from 'bullmq';
import type { RedisClient } from './connection.js';
import { type BullmqScript, bullmqLibrary, bullmqScripts } from './libraries.js';
import { LuaScript } from './lua-script.js';
import { SHARE_FIELD } from './share-field.js';

/** Our part of a folded command: the record script's keys and arguments. */
export interface RecordCommand {
  readonly keys: readonly string[];
  readonly args: readonly (string | number)[];
}

/**
 * Runs one compare-and-set attempt of the record through `write` (keys and arguments of
 * `COMPARE_AND_SET`; resolves 1 written, 0 gone, -1 lost the race), as many times as it needs.
 */
export type OutcomeWriter = (write: (command: RecordCommand) => Promise<number>) => Promise<unknown>;

/** What an insert folded into a job insert refused: the insert script's reply (see record-store.ts). */
export class FoldedInsertRefusedError extends Error {
  override readonly name: string = 'FoldedInsertRefusedError';
  constructor(readonly reply: unknown) {
    super('The task record was not stored, so no job was added');
  }
}

/** Returned by the folded finish when the record was not written (BullMQ's own codes are -1 to -10). */
const RECORD_GONE = -1000;
const RECORD_CONFLICT = -1001;

type AddName = 'addStandardJob' | 'addPrioritizedJob' | 'addDelayedJob' | 'addParentJob';
type Folded = AddName | 'moveToFinished' | 'moveToActive';
const ADD_NAMES: readonly AddName[] = ['addStandardJob', 'addPrioritizedJob', 'addDelayedJob', 'addParentJob'];

/** The keys and arguments each folded BullMQ script takes, as BullMQ's own callers pass them. */
const BULLMQ_SHAPE: Readonly<Record<Folded, { readonly keys: number; readonly args: number }>> = {
  addStandardJob: { keys: 9, args: 3 },
  addPrioritizedJob: { keys: 9, args: 3 },
  addDelayedJob: { keys: 6, args: 3 },
  addParentJob: { keys: 6, args: 3 },
  moveToFinished: { keys: 14, args: 9 },
  moveToActive: { keys: 11, args: 3 },
};

/** BullMQ's script text, as its backend loads it; throws when its shape is not the one folded here. */
function bullmqScript(name: Folded): BullmqScript {
  const script = bullmqScripts()[name];
  if (!script || script.keys !== BULLMQ_SHAPE[name].keys) {
    throw new Error(
      `BullMQ's ${name} script takes ${script?.keys} keys where the task runtime folds its record into one of ${BULLMQ_SHAPE[name].keys}: this BullMQ version is not supported`,
    );
  }
  return script;
}

/** BullMQ's arguments for `name` had the length its script takes, or the fold would misplace ours. */
function checkShape(name: Folded, length: number): void {
  const shape = BULLMQ_SHAPE[name];
  if (length !== shape.keys + shape.args) {
    throw new Error(
      `BullMQ sent ${length} keys and arguments to ${name} where the task runtime expects ${shape.keys + shape.args}: this BullMQ version is not supported`,
    );
  }
}

/**
 * Our script as a function of its own `KEYS` and `ARGV` (parameters shadow the globals), fed
 * with the keys and arguments after BullMQ's.
 */
function ourPart(name: string, source: string, bullKeys: number, bullArgs: number): string {
  return `
local ${name}Keys, ${name}Args = {}, {}
for i = ${bullKeys + 1}, #KEYS do ${name}Keys[#${name}Keys + 1] = KEYS[i] end
for i = ${bullArgs + 1}, #ARGV do ${name}Args[#${name}Args + 1] = ARGV[i] end
local function ${name}(KEYS, ARGV)
${source}
end
`;
}

/**
 * The insert, then BullMQ's job insert. After BullMQ's arguments: the job's share for its
 * hash (`SHARE_FIELD`; '' for none), then the insert's arguments.
 */
function insertAndAdd(insertSource: string, bull: AddName): LuaScript {
  const script = bullmqScript(bull);
  const args = BULLMQ_SHAPE[bull].args;
  return new LuaScript(
    `mcpInsertAnd${bull.charAt(0).toUpperCase()}${bull.slice(1)}`,
    `
local mcpShareField = ARGV[${args + 1}]
${ourPart('mcpInsert', insertSource, script.keys, args + 1)}
local mcpInserted = mcpInsert(mcpInsertKeys, mcpInsertArgs)
if mcpInserted ~= 1 then return { mcpInserted } end
-- The start snapshot: the record JSON (the insert's first argument) as the job data's "start".
ARGV[2] = string.sub(ARGV[2], 1, -2) .. ',"start":' .. mcpInsertArgs[1] .. '}'
local function mcpBull()
${script.content}
end
local mcpAdded = mcpBull()
-- BullMQ answers the job's id once it added the job (a number is one of its refusals).
if mcpShareField ~= '' and type(mcpAdded) == 'string' then
  redis.call('HSET', mcpInsertKeys[3], '${SHARE_FIELD}', mcpShareField)
end
return mcpAdded`,
  );
}

/**
 * BullMQ's `moveToActive` or (unfolded) `moveToFinished`, then the share's take for the job it
 * activated. After BullMQ's arguments: the time, then the share key bases.
 */
function thenTake(name: 'moveToActive' | 'moveToFinished', takeSource: string): LuaScript {
  const script = bullmqScript(name);
  const args = BULLMQ_SHAPE[name].args;
  return new LuaScript(
    `mcp${name.charAt(0).toUpperCase()}${name.slice(1)}AndTake`,
    `${takeSource}
local mcpNow = ARGV[${args + 1}]
local mcpBases = {}
for i = ${args + 2}, #ARGV do mcpBases[#mcpBases + 1] = ARGV[i] end
local function mcpBull()
${script.content}
end
return mcpTake(mcpBull(), mcpNow, mcpBases)`,
  );
}

/**
 * The outcome's compare-and-set, then BullMQ's `moveToFinished`, then (when the run held a fair
 * share's slot, and the share's keys can join: see `FoldedShareRelease`) the slot's release,
 * then the take for the next job BullMQ activated (when the worker takes in scripts: see
 * `SHARE_TAKE_SCRIPT`). After BullMQ's keys: the share's (3, or none), then the record's. After its
 * arguments: how many share keys, the time, how many share key bases, the bases, then the
 * record's. With a release the reply is `{ head, BullMQ's reply }` (`head` the owner's next
 * waiter, or ''); a refusal of BullMQ's part (a negative code: the lock is lost, the job is
 * gone) releases nothing and is returned alone. The release goes before the take: the next job
 * may be the same owner's, and the slot just freed is then its.
 */
function writeAndFinish(compareAndSetSource: string, shareReleaseSource: string, takeSource: string): LuaScript {
  const script = bullmqScript('moveToFinished');
  const keys = script.keys;
  const args = BULLMQ_SHAPE.moveToFinished.args;
  return new LuaScript(
    'mcpWriteAndMoveToFinished',
    `${takeSource}
local mcpShareKeyCount = tonumber(ARGV[${args + 1}])
local mcpNow = ARGV[${args + 2}]
local mcpBaseCount = tonumber(ARGV[${args + 3}])
local mcpShareKeys, mcpWriteKeys, mcpWriteArgs, mcpBases = {}, {}, {}, {}
for i = ${keys + 1}, ${keys} + mcpShareKeyCount do mcpShareKeys[#mcpShareKeys + 1] = KEYS[i] end
for i = ${keys + 1} + mcpShareKeyCount, #KEYS do mcpWriteKeys[#mcpWriteKeys + 1] = KEYS[i] end
for i = ${args + 4}, ${args + 3} + mcpBaseCount do mcpBases[#mcpBases + 1] = ARGV[i] end
for i = ${args + 4} + mcpBaseCount, #ARGV do mcpWriteArgs[#mcpWriteArgs + 1] = ARGV[i] end
local function mcpWrite(KEYS, ARGV)
${compareAndSetSource}
end
local function mcpShareRelease(KEYS, ARGV)
${shareReleaseSource}
end
local function mcpBull()
${script.content}
end
local mcpWritten = mcpWrite(mcpWriteKeys, mcpWriteArgs)
if mcpWritten == 0 then return ${RECORD_GONE} end
if mcpWritten ~= 1 then return ${RECORD_CONFLICT} end
local mcpReply = mcpBull()
if type(mcpReply) == 'number' and mcpReply < 0 then return mcpReply end
if mcpShareKeyCount == 0 then return mcpTake(mcpReply, mcpNow, mcpBases) end
local mcpHead = mcpShareRelease(mcpShareKeys, { ARGV[1], mcpNow }) or ''
return { mcpHead, mcpTake(mcpReply, mcpNow, mcpBases) }
`,
  );
}

/**
 * A fair-share slot freed in the script that completes the job (one Redis only: on a cluster
 * the share's keys are in a slot of their own). Exactly one of `released` and `alone` is called.
 */
export interface FoldedShareRelease {
  /** The share's keys: running, waiting, waitingAll (see principal-shares.ts). */
  readonly keys: readonly string[];
  /** The completion freed the slot and popped `head`, the owner's next waiter, if any. */
  readonly released: (head: string | undefined) => void;
  /** The completion did not free it (the job was not completed by it): free it alone. */
  readonly alone: () => void;
}

interface PendingInsert {
  readonly command: RecordCommand;
  /** The job's share for its hash (`SHARE_FIELD`), or ''. */
  readonly shareField: string;
}

interface PendingOutcome {
  readonly writer: OutcomeWriter;
  readonly share: FoldedShareRelease | undefined;
}

type AddScript = (client: unknown, job: unknown, encodedOpts: unknown, args: unknown[], keys?: unknown) => unknown;
type AddArgs = (job: unknown, encodedOpts: unknown, args: unknown[], keys?: unknown) => unknown[];
type ExecCommand = (client: unknown, name: string, args: (string | number | Buffer)[]) => Promise<unknown>;

/**
 * The folds of one Redis client (the runtime's or a worker's): the backend factory its queues
 * or workers are built with, and the record commands waiting for BullMQ to send its part.
 */
export class RecordFold {
  private readonly inserts = new Map<string, PendingInsert>();
  private readonly outcomes = new Map<string, PendingOutcome>();
  /**
   * What the scripts that activated jobs answered about their shares, by job id, until the
   * job's run asks (`takenAtActivation`): -1 the slot is taken, n ≥ 0 the task is in line.
   */
  private readonly takes = new Map<string, number>();
  /** The insert folded into each of BullMQ's job inserts. */
  private readonly insertAnd: Readonly<Record<AddName, LuaScript>>;
  private readonly finish: LuaScript;
  private readonly activateAndTake: LuaScript | undefined;
  private readonly finishAndTake: LuaScript | undefined;
  /** The share key bases by home index, passed to every take; empty when jobs are not taken in scripts. */
  private readonly bases: readonly string[];

  constructor(
    private readonly client: RedisClient,
    sources: {
      readonly insert: string;
      readonly compareAndSet: string;
      /** The share's release (`SHARE_SCRIPTS.shareRelease`). */
      readonly shareRelease: string;
      /** Lua defining `mcpTake(reply, now, bases)`, the share's take for an activated job (`SHARE_TAKE_SCRIPT`). */
      readonly shareTake: string;
    },
    private readonly clock: () => number = Date.now,
    /**
     * For a worker's fold on one Redis: the share key bases (`ShareNames.bases`). Then every
     * job BullMQ activates through this fold has its share's slot taken in the same script.
     */
    takeShares?: { readonly bases: readonly string[] },
  ) {
    this.insertAnd = Object.fromEntries(ADD_NAMES.map((name) => [name, insertAndAdd(sources.insert, name)])) as Record<
      AddName,
      LuaScript
    >;
    this.finish = writeAndFinish(sources.compareAndSet, sources.shareRelease, sources.shareTake);
    this.bases = takeShares?.bases ?? [];
    if (takeShares) {
      this.activateAndTake = thenTake('moveToActive', sources.shareTake);
      this.finishAndTake = thenTake('moveToFinished', sources.shareTake);
    }
    for (const script of [
      ...Object.values(this.insertAnd),
      this.finish,
      ...(this.activateAndTake && this.finishAndTake ? [this.activateAndTake, this.finishAndTake] : []),
    ]) {
      script.define(client);
    }
  }

  /** For `Queue` and `Worker`: BullMQ's Redis backend with the folds in place. */
  readonly backendFactory: BackendFactory<RedisQueueBackend> = (name, opts, flags) => {
    const backend = bullmqLibrary().createRedisBackend(name, opts, flags);
    this.install(backend);
    return backend;
  };

  /**
   * Runs `add` (which adds the task's job through a queue of this fold) with `insert` folded
   * into the job insert. Rejects with `FoldedInsertRefusedError` when the insert refused.
   * `shareField`: the job's share, written into its hash (`SHARE_FIELD`; '' for none).
   */
  async addWithRecord<T>(taskId: string, insert: RecordCommand, add: () => Promise<T>, shareField = ''): Promise<T> {
    this.inserts.set(taskId, { command: insert, shareField });
    try {
      const added = await add();
      // Still here: BullMQ added the job through a script that is not folded (one a later
      // BullMQ adds), so the record was never stored. Loud, and the caller undoes the create.
      if (this.inserts.has(taskId)) throw new Error(`Task ${taskId}: its job was added without its record`);
      return added;
    } finally {
      this.inserts.delete(taskId);
    }
  }

  /**
   * The outcome of the job `taskId` is written by `writer` in the command that completes the
   * job: call before the processor returns. A job that is not completed after all (its worker
   * lost the lock) leaves nothing behind once it runs again (`forget`). `share`: the run's
   * fair-share slot, freed in the same script (only where its keys can join it).
   */
  finishWithRecord(taskId: string, writer: OutcomeWriter, share?: FoldedShareRelease): void {
    this.outcomes.get(taskId)?.share?.alone();
    this.outcomes.set(taskId, { writer, share });
  }

  /**
   * What the script that activated the job `taskId` did about its share, once (the answer is
   * dropped as it is read): `taken` (the slot is held from now on: renew it, release it),
   * `{ running }` (the owner runs its whole share, and the task is in its line), or `undefined`
   * when no script took it (the job names no share in its hash, or this fold does not take).
   */
  takenAtActivation(taskId: string): 'taken' | { readonly running: number } | undefined {
    const take = this.takes.get(taskId);
    if (take === undefined) return undefined;
    this.takes.delete(taskId);
    return take < 0 ? 'taken' : { running: take };
  }

  /**
   * Drops an outcome that never reached BullMQ's completion (the job is running again, or the
   * worker closes); its share slot, if it was to be freed by the completion, is freed alone.
   */
  forget(taskId?: string): void {
    const dropped = taskId === undefined ? [...this.outcomes.values()] : [this.outcomes.get(taskId)];
    if (taskId === undefined) {
      this.outcomes.clear();
      // Jobs activated for runs that never began here: their slots lapse with their leases.
      this.takes.clear();
    } else this.outcomes.delete(taskId);
    for (const outcome of dropped) outcome?.share?.alone();
  }

  private install(backend: RedisQueueBackend): void {
    const target = backend as unknown as Record<string, AddScript | AddArgs | ExecCommand>;
    for (const method of ADD_NAMES) {
      const script = this.insertAnd[method];
      const original = (target[method] as AddScript).bind(backend);
      const argsOf = (target[`${method}Args`] as AddArgs).bind(backend);
      target[method] = ((client, job, encodedOpts, args, keys) => {
        const insert = this.inserts.get(String(args[1]));
        if (!insert) return original(client, job, encodedOpts, args, keys);
        this.inserts.delete(String(args[1]));
        const bull = argsOf(job, encodedOpts, args, keys);
        checkShape(method, bull.length);
        // A MULTI (a flow adds its jobs in one) carries our script too: it is defined on its client.
        const on = (client as { isPipeline?: boolean }).isPipeline ? (client as RedisClient) : this.client;
        return this.addFolded(on, script, bull, insert, BULLMQ_SHAPE[method].args);
      }) as AddScript;
    }
    const exec = (target.execCommand as ExecCommand).bind(backend);
    target.execCommand = ((client, name, args) => {
      if (name === 'moveToActive' && this.activateAndTake) {
        checkShape(name, args.length);
        return this.runAndNoteTake(this.activateAndTake, name, args);
      }
      if (name !== 'moveToFinished') return exec(client, name, args);
      const outcome = this.outcomes.get(String(args[BULLMQ_SHAPE.moveToFinished.keys]));
      const unfolded = this.finishAndTake
        ? () => this.runAndNoteTake(this.finishAndTake as LuaScript, name, args)
        : () => exec(client, name, args);
      if (!outcome) {
        if (this.finishAndTake) checkShape(name, args.length);
        return unfolded();
      }
      checkShape(name, args.length);
      return this.finishFolded(outcome, args, unfolded);
    }) as ExecCommand;
  }

  /** BullMQ's script `name` with the share's take after it (`thenTake`); notes what the take did. */
  private async runAndNoteTake(script: LuaScript, name: Folded, bull: (string | number | Buffer)[]): Promise<unknown> {
    const keyCount = BULLMQ_SHAPE[name].keys;
    const reply = await script.run(this.client, bull.slice(0, keyCount) as string[], [
      ...(bull.slice(keyCount) as (string | number)[]),
      this.clock(),
      ...this.bases,
    ]);
    this.noteTake(reply);
    return reply;
  }

  /** Keeps the take's answer (the fifth element of a reply with a job: see `SHARE_TAKE_SCRIPT`) for the job's run. */
  private noteTake(reply: unknown): void {
    if (Array.isArray(reply) && reply.length > 4 && typeof reply[1] === 'string') {
      this.takes.set(reply[1], Number(reply[4]));
    }
  }

  private async addFolded(
    client: RedisClient,
    script: LuaScript,
    bull: unknown[],
    { command, shareField }: PendingInsert,
    bullArgCount: number,
  ): Promise<unknown> {
    const keyCount = bull.length - bullArgCount;
    const reply = await script.run(
      client,
      [...(bull.slice(0, keyCount) as string[]), ...command.keys],
      [...(bull.slice(keyCount) as (string | number)[]), shareField, ...command.args],
    );
    if (Array.isArray(reply)) throw new FoldedInsertRefusedError(reply[0]);
    return reply;
  }

  private async finishFolded(
    { writer, share }: PendingOutcome,
    bull: (string | number | Buffer)[],
    unfolded: () => Promise<unknown>,
  ): Promise<unknown> {
    const jobId = String(bull[BULLMQ_SHAPE.moveToFinished.keys]);
    const keyCount = BULLMQ_SHAPE.moveToFinished.keys;
    const shareKeys = share?.keys ?? [];
    let finished: { reply: unknown } | undefined;
    try {
      await writer(async (command) => {
        const reply = await this.finish.run(
          this.client,
          [...(bull.slice(0, keyCount) as string[]), ...shareKeys, ...command.keys],
          [
            ...(bull.slice(keyCount) as (string | number)[]),
            shareKeys.length,
            this.clock(),
            this.bases.length,
            ...this.bases,
            ...command.args,
          ],
        );
        if (reply === RECORD_GONE) return 0;
        if (reply === RECORD_CONFLICT) return -1;
        finished = { reply };
        return 1;
      });
    } catch (error) {
      // The write failed: BullMQ fails the job instead, and the slot is freed alone.
      share?.alone();
      throw error;
    } finally {
      // Written (or not needed: the task ended already, or its record is gone): the job is done.
      this.outcomes.delete(jobId);
    }
    if (!finished) {
      share?.alone();
      return unfolded();
    }
    if (!share) {
      this.noteTake(finished.reply);
      return finished.reply;
    }
    if (!Array.isArray(finished.reply)) {
      // BullMQ's part refused (its negative code, which BullMQ turns into an error): nothing freed.
      share.alone();
      return finished.reply;
    }
    const [head, reply] = finished.reply as [unknown, unknown];
    share.released(typeof head === 'string' && head !== '' ? head : undefined);
    this.noteTake(reply);
    return reply;
  }
}
