/**
 * What happened to each task, as this server saw it: a record holds only its latest state, so
 * the dashboard keeps the story (status messages, progress, questions, answers, outcome) from
 * the engine's change events. Bounded in tasks and entries; a task it never saw gets a story
 * rebuilt from its current record.
 */
import { expiresAt, type TaskProgressValue, type TaskRecord, type TaskStatus } from '../engine/task.js';

export interface TimelineEntry {
  /** Milliseconds since the epoch. */
  readonly at: number;
  readonly kind: 'created' | 'status' | 'message' | 'progress' | 'question' | 'answer' | 'result' | 'error';
  readonly text: string;
}

/** Tasks followed at once; the oldest is forgotten first. */
const MAX_TASKS = 2000;
/** Entries kept per task; the first (creation) always stays. */
const MAX_ENTRIES = 200;

interface Followed {
  last: Seen;
  entries: TimelineEntry[];
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
    ended: record.outcome !== undefined,
  };
}

export class TaskTimelines {
  private readonly tasks = new Map<string, Followed>();

  /** Takes in one change of one task. */
  record(record: TaskRecord): void {
    const followed = this.tasks.get(record.taskId);
    if (!followed) {
      if (this.tasks.size >= MAX_TASKS) {
        const oldest = this.tasks.keys().next().value;
        if (oldest !== undefined) this.tasks.delete(oldest);
      }
      this.tasks.set(record.taskId, { last: seen(record), entries: changes(undefined, record) });
      return;
    }
    if (record.lastUpdatedAt < followed.last.lastUpdatedAt) return;
    const added = changes(followed.last, record);
    followed.last = seen(record);
    followed.entries.push(...added);
    if (followed.entries.length > MAX_ENTRIES) followed.entries.splice(1, followed.entries.length - MAX_ENTRIES);
  }

  /** The task's story up to `record` (its freshest state). */
  of(record: TaskRecord): readonly TimelineEntry[] {
    this.record(record);
    return this.tasks.get(record.taskId)?.entries ?? changes(undefined, record);
  }
}

/** What differs between two states of a task, as timeline entries. */
export function changes(previous: Seen | undefined, next: TaskRecord): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  const at = next.lastUpdatedAt;
  if (!previous) {
    const ttl = next.ttlMs === null ? 'kept until deleted' : `kept until ${new Date(expiresAt(next)).toISOString()}`;
    entries.push({ at: next.createdAt, kind: 'created', text: `created (${ttl})` });
  }
  if (next.status !== (previous?.status ?? 'working')) entries.push({ at, kind: 'status', text: next.status });
  if (next.statusMessage !== undefined && next.statusMessage !== previous?.statusMessage) {
    entries.push({ at, kind: 'message', text: next.statusMessage });
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
  if (next.outcome && !previous?.ended) {
    entries.push(
      next.outcome.kind === 'error'
        ? { at, kind: 'error', text: `${next.outcome.error.code}: ${next.outcome.error.message}` }
        : { at, kind: next.outcome.isError ? 'error' : 'result', text: resultText(next.outcome.result) },
    );
  }
  return entries;
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
