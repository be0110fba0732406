/**
 * Names of everything the runtime keeps in Redis besides BullMQ's own keys.
 *
 * BullMQ writes `<prefix>:<queue>:…`. Ours live under `<prefix>::<queue>:…`: a queue name is
 * never empty, so the double colon cannot collide with any BullMQ key (BullMQ's Relay uses the
 * same trick), and one `SCAN <prefix>:*` still finds every key of an app.
 */

export interface RuntimeNames {
  /** BullMQ's key prefix, shared with every Queue/Worker of the app. */
  readonly prefix: string;
  /** The BullMQ queue tasks run on; the task id is the job id. */
  readonly queue: string;
  /** Hash `{ record: JSON, version: n }` of one task; expires at `createdAt + ttlMs`. */
  record(taskId: string): string;
  /** Sorted set of an owner's task ids, scored by `createdAt`. */
  owner(owner: string): string;
  /** The same ids scored by expiry, so dead entries are pruned by score on every insert. */
  ownerExpiries(owner: string): string;
  /**
   * Sorted set of an owner's (anonymous: `null`) unfinished task ids, scored by their expiry:
   * the live-task quota counts it.
   */
  live(owner: string | null): string;
  /** BullMQ's lock on a running job (present while a live worker renews it). */
  jobLock(taskId: string): string;
  /** Pub/sub: every record write, as `{ record, previous? }`. */
  readonly eventsChannel: string;
  /** Pub/sub: ids of tasks whose running work must stop, for the workers. */
  readonly cancelChannel: string;
  /** Pub/sub: ids of tasks that got answers, for workers holding a run open for them. */
  readonly answersChannel: string;
}

export const DEFAULT_PREFIX = 'mcp';
export const DEFAULT_QUEUE = 'tasks';

export function runtimeNames(prefix = DEFAULT_PREFIX, queue = DEFAULT_QUEUE): RuntimeNames {
  if (prefix === '' || queue === '') throw new Error('The Redis prefix and the queue name must not be empty');
  if (queue.includes(':')) throw new Error(`The queue name must not contain ':' (got ${JSON.stringify(queue)})`);
  const base = `${prefix}::${queue}`;
  return {
    prefix,
    queue,
    record: (taskId) => `${base}:task:${taskId}`,
    owner: (owner) => `${base}:owner:${owner}`,
    ownerExpiries: (owner) => `${base}:owner-expiry:${owner}`,
    live: (owner) => (owner === null ? `${base}:live-anonymous` : `${base}:live:${owner}`),
    jobLock: (taskId) => `${prefix}:${queue}:${taskId}:lock`,
    eventsChannel: `${base}:events`,
    cancelChannel: `${base}:cancel`,
    answersChannel: `${base}:answers`,
  };
}
