/**
 * What happened to each task, as this server saw it: a record holds only its latest state, so
 * the dashboard keeps the story (status messages, progress, questions, answers, outcome) from
 * the engine's change events. Those reach every server process, whichever runs the task, so
 * what a record says (a retry's wait, a priority) comes from them. Facts no record keeps (a
 * timed-out attempt, a repeated idempotent create, why a task waits) come from the lifecycle
 * events this process observes. Bounded in tasks and entries; a task it never saw gets a story
 * rebuilt from its current record.
 */
import { formatDuration, isRetryMessage } from '../engine/attempts.js';
import type { LifecycleEvent, TaskObserver } from '../engine/lifecycle.js';
import { isSleepNote, sleepNoteUntil } from '../engine/sleeps.js';
import { expiresAt, type TaskProgressValue, type TaskRecord, type TaskStatus } from '../engine/task.js';

/** One line of a task's story on the dashboard. */
export interface TimelineEntry {
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly kind: TimelineKind;
  readonly text: string;
}

/**
 * What a timeline entry tells: `retry`, the wait for the next attempt (`attempt 2 of 5 in 4 s:
 * ECONNRESET`); `timeout`, an attempt that reached the tool's `timeoutMs`; `idempotent_hit`, a
 * repeated create that got this task; `waiting`, why a task that could start waits (any reason);
 * `parked`, a wait without a worker began (`sleeping until <ISO time>`, a callback hook); `woke`, it ended.
 */
export type TimelineKind =
  | 'created'
  | 'status'
  | 'message'
  | 'progress'
  | 'question'
  | 'answer'
  | 'result'
  | 'error'
  | 'retry'
  | 'timeout'
  | 'idempotent_hit'
  | 'waiting'
  | 'parked'
  | 'woke';

/** An entry from a lifecycle event, with the principal the event named (checked against the owner). */
interface ObservedEntry extends TimelineEntry {
  readonly principal: string | null;
}

/** Tasks followed at once; the oldest is forgotten first. */
const MAX_TASKS = 2000;
/** Entries kept per task; the first (creation) always stays. */
const MAX_ENTRIES = 200;

interface Followed {
  /** Absent while only lifecycle events have been heard of the task, before its first record. */
  last?: Seen;
  entries: (TimelineEntry | ObservedEntry)[];
}

/**
 * What the next state of a task is compared with: only the fields \`changes\` reads. Keeping the
 * record itself would hold its arguments, steps and result (up to megabytes each) for every one
 * of the \`MAX_TASKS\` tasks followed, long after the task is gone.
 */
export interface Seen {
  readonly lastUpdatedAt: number;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly progress?: TaskProgressValue;
  readonly questions: ReadonlySet<string>;
  readonly answers: ReadonlySet<string>;
  /** Callback hooks by key, with the status each was last seen in. */
  readonly callbacks: ReadonlyMap<string, string>;
  readonly ended: boolean;
}

function seen(record: TaskRecord): Seen {
  return {
    lastUpdatedAt: record.lastUpdatedAt,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    ...(record.progress && { progress: record.progress }),
    questions: new Set(Object.keys(record.inputRequests ?? {})),
    answers: new Set(Object.keys(record.inputAnswers ?? {})),
    callbacks: new Map(Object.entries(record.callbacks ?? {}).map(([key, state]) => [key, state.status])),
    ended: record.outcome !== undefined,
  };
}

/**
 * The stories of the tasks this server follows. It observes lifecycle events too (pass it to
 * the server's observer), for the facts no record keeps.
 */
export class TaskTimelines implements TaskObserver {
  private readonly tasks = new Map<string, Followed>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes in one change of one task. */
  record(record: TaskRecord): void {
    const followed = this.tasks.get(record.taskId);
    if (!followed) {
      this.follow(record.taskId, { last: seen(record), entries: changes(undefined, record) });
      return;
    }
    if (!followed.last) {
      // Events came first (an in-process worker can tell of a wait before the change arrives).
      followed.entries.unshift(...changes(undefined, record));
      followed.last = seen(record);
      this.trim(followed);
      return;
    }
    if (record.lastUpdatedAt < followed.last.lastUpdatedAt) return;
    const added = changes(followed.last, record);
    followed.last = seen(record);
    followed.entries.push(...added);
    this.trim(followed);
  }

  /** Takes in the lifecycle facts a timeline shows and no record keeps; ignores the rest. */
  observe(event: LifecycleEvent): void {
    const shown = observed(event);
    if (shown === undefined) return;
    const entry: ObservedEntry = { at: this.now(), ...shown, principal: event.task.principal };
    const followed = this.tasks.get(event.task.taskId);
    if (!followed) {
      this.follow(event.task.taskId, { entries: [entry] });
      return;
    }
    followed.entries.push(entry);
    this.trim(followed);
  }

  /**
   * The task's story up to `record` (its freshest state). An observed entry naming another
   * principal than the record's owner is left out: a story shows only its owner's facts.
   */
  of(record: TaskRecord): readonly TimelineEntry[] {
    this.record(record);
    const entries = this.tasks.get(record.taskId)?.entries ?? changes(undefined, record);
    return entries
      .filter((entry) => !('principal' in entry) || entry.principal === record.owner)
      .map(({ at, kind, text }) => ({ at, kind, text }));
  }

  private follow(taskId: string, followed: Followed): void {
    if (this.tasks.size >= MAX_TASKS) {
      const oldest = this.tasks.keys().next().value;
      if (oldest !== undefined) this.tasks.delete(oldest);
    }
    this.tasks.set(taskId, followed);
  }

  private trim(followed: Followed): void {
    if (followed.entries.length > MAX_ENTRIES) followed.entries.splice(1, followed.entries.length - MAX_ENTRIES);
  }
}

/** The timeline's entry for a lifecycle event it shows (`timed_out`, `idempotent_hit`, `waiting`). */
function observed(event: LifecycleEvent): Pick<TimelineEntry, 'kind' | 'text'> | undefined {
  switch (event.type) {
    case 'timed_out':
      return {
        kind: 'timeout',
        text: `attempt ${event.attempt} of ${event.attempts} timed out after ${formatDuration(event.timeoutMs)}`,
      };
    case 'idempotent_hit':
      return {
        kind: 'idempotent_hit',
        text: `a repeated create with the same idempotency key returned this task (${event.status})`,
      };
    // A sleep's start and end are read from the record (`changes`), which every process sees.
    case 'parked':
    case 'woke':
      return undefined;
    case 'waiting':
      // Named as the metrics label the reason: `waits (principal_share)`, `waits (version)`.
      return {
        kind: 'waiting',
        text:
          event.reason === 'version'
            ? `waits (version): for a worker with version ${event.version} (this one runs ${event.workerVersion})`
            : `waits (${event.reason}): ${event.running} running, limit ${event.limit}`,
      };
    default:
      return undefined;
  }
}

/** What differs between two states of a task, as timeline entries. */
export function changes(previous: Seen | undefined, next: TaskRecord): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const at = next.lastUpdatedAt;
  if (!previous) {
    const ttl = next.ttlMs === null ? 'kept until deleted' : `kept until ${new Date(expiresAt(next)).toISOString()}`;
    const priority = next.priority ? `priority ${next.priority}, ` : '';
    entries.push({ at: next.createdAt, kind: 'created', text: `created (${priority}${ttl})` });
  }
  // A sleep's end shows where its note gives way, unless a cancel ended it: the record says
  // so on every server process, wherever the worker that woke it runs.
  const slept = sleepNoteUntil(previous?.statusMessage);
  if (slept !== undefined && next.statusMessage !== previous?.statusMessage && next.status !== 'cancelled') {
    entries.push({ at, kind: 'woke', text: `woke (slept until ${new Date(slept).toISOString()})` });
  }
  if (next.status !== (previous?.status ?? 'working')) entries.push({ at, kind: 'status', text: next.status });
  if (next.statusMessage !== undefined && next.statusMessage !== previous?.statusMessage) {
    entries.push({ at, kind: messageKind(next.statusMessage), text: next.statusMessage });
  }
  const progress = next.progress;
  if (
    progress &&
    (progress.progress !== previous?.progress?.progress || progress.total !== previous?.progress?.total)
  ) {
    entries.push({
      at,
      kind: 'progress',
      text: progress.total !== undefined ? `${progress.progress} of ${progress.total}` : String(progress.progress),
    });
  }
  for (const [key, pending] of Object.entries(next.inputRequests ?? {})) {
    if (previous?.questions.has(key)) continue;
    const message = typeof pending.params.message === 'string' ? pending.params.message : pending.question;
    entries.push({ at, kind: 'question', text: `${key}: ${message}` });
  }
  for (const [key, answer] of Object.entries(next.inputAnswers ?? {})) {
    if (previous?.answers.has(key)) continue;
    entries.push({ at, kind: 'answer', text: `${key}: ${answer.action}` });
  }
  // Read from the record, so the wait and its end show whichever process parked or woke it.
  for (const [key, state] of Object.entries(next.callbacks ?? {})) {
    const before = previous?.callbacks.get(key);
    if (before === undefined) {
      const until = state.timeoutAt === null ? 'no timeout' : `times out ${new Date(state.timeoutAt).toISOString()}`;
      entries.push({ at, kind: 'parked', text: `callback ${state.name} (${key}) made, ${until}` });
    }
    if (state.status !== 'waiting' && before !== state.status) {
      entries.push({
        at,
        kind: 'woke',
        text: `callback ${state.name} (${key}) ${state.status === 'received' ? 'received' : 'timed out'}`,
      });
    }
  }
  if (next.outcome && !previous?.ended) {
    entries.push(
      next.outcome.kind === 'error'
        ? { at, kind: 'error', text: `${next.outcome.error.code}: ${next.outcome.error.message}` }
        : { at, kind: next.outcome.isError ? 'error' : 'result', text: resultText(next.outcome.result) },
    );
  }
  return entries;
}

/** A status message's kind: a retry's wait, a sleep's start, or the method's own message. */
function messageKind(message: string): TimelineKind {
  if (isRetryMessage(message)) return 'retry';
  if (isSleepNote(message)) return 'parked';
  return 'message';
}

/** The text blocks of a result, shortened for a timeline line. */
export function resultText(result: Readonly<Record<string, unknown>>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts = content
    .filter(
      (block): block is { type: 'text'; text: string } => block?.type === 'text' && typeof block.text === 'string',
    )
    .map((block) => block.text);
  const text = texts.length > 0 ? texts.join('\n') : `${content.length} content block(s)`;
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
