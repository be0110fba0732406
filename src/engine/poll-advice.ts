/**
 * The poll interval a task suggests, fitted to its tool. Each tool keeps a small sample of how
 * long its recent tasks took from creation to their end; a task that has not ended suggests
 * the median time left for tasks of its age, so that a client polling at the suggestion lands
 * its next poll near the end rather than a whole interval past it. Bounds: never below the
 * floor (the server's `minPollIntervalMs`, raised to what the read rate limit comfortably
 * allows), never above the interval configured for the tool (`@Task({ pollIntervalMs })`, else
 * the server's `defaultPollIntervalMs`), which is also what a task suggests while its tool has
 * no data (fewer than `MIN_SAMPLES` runs seen) or has outlived every run in the sample.
 *
 * The sample is per process, fed by the ended tasks this process reads (a poll that finds the
 * task done, a blocking result): it costs no Redis command and no event traffic. Only runs that
 * asked no question count, since a person's answer time says nothing of the tool's.
 */
import type { TaskRecord } from './task.js';

/** Runs kept per tool: enough for a steady median, few enough to follow a change within minutes. */
export const RUN_SAMPLE_SIZE = 32;
/** Below this many runs a tool has no data: the configured interval stands. */
export const MIN_SAMPLES = 3;
/** Tools tracked at most; past it the least recently fed one is forgotten (a bound, not a tuning knob). */
const MAX_TOOLS = 1000;

interface Sample {
  /** Run lengths in ms, oldest first. */
  readonly durations: number[];
  /** The task ids they came from, so a task read twice counts once. */
  readonly taskIds: string[];
}

export class RunTimes {
  private readonly tools = new Map<string, Sample>();

  /** Learns from a task that ended by its own work (completed or failed) without asking anything. */
  learn(record: TaskRecord): void {
    if (record.status !== 'completed' && record.status !== 'failed') return;
    if (record.inputAnswers && Object.keys(record.inputAnswers).length > 0) return;
    const duration = record.lastUpdatedAt - record.createdAt;
    if (!Number.isFinite(duration) || duration < 0) return;
    this.record(record.tool, record.taskId, duration);
  }

  /** Notes one run of `tool` that took `durationMs` (the `taskId` keeps repeats out). */
  record(tool: string, taskId: string, durationMs: number): void {
    let sample = this.tools.get(tool);
    if (sample?.taskIds.includes(taskId)) return;
    if (sample) {
      // Re-inserted: the map's order is the order tools were last fed.
      this.tools.delete(tool);
    } else {
      sample = { durations: [], taskIds: [] };
      if (this.tools.size >= MAX_TOOLS) this.tools.delete(this.tools.keys().next().value as string);
    }
    this.tools.set(tool, sample);
    sample.durations.push(durationMs);
    sample.taskIds.push(taskId);
    if (sample.durations.length > RUN_SAMPLE_SIZE) {
      sample.durations.shift();
      sample.taskIds.shift();
    }
  }

  /**
   * The median time left for a task of `tool` that is `ageMs` old, over the sampled runs that
   * lasted longer; `undefined` without data or when the task outlived every sampled run.
   */
  medianTimeLeft(tool: string, ageMs: number): number | undefined {
    const durations = this.tools.get(tool)?.durations;
    if (!durations || durations.length < MIN_SAMPLES) return undefined;
    const left = durations
      .filter((duration) => duration > ageMs)
      .map((duration) => duration - ageMs)
      .sort((a, b) => a - b);
    if (left.length === 0) return undefined;
    const middle = Math.floor(left.length / 2);
    return left.length % 2 === 1
      ? (left[middle] as number)
      : ((left[middle - 1] as number) + (left[middle] as number)) / 2;
  }
}

/**
 * What a task that has not ended suggests: the median time left for its age, within
 * [`floorMs`, the task's configured interval]; the configured interval without data.
 */
export function suggestPollInterval(
  record: Pick<TaskRecord, 'tool' | 'createdAt' | 'pollIntervalMs'>,
  now: number,
  runTimes: RunTimes,
  floorMs: number,
): number {
  const configured = record.pollIntervalMs;
  const left = runTimes.medianTimeLeft(record.tool, Math.max(0, now - record.createdAt));
  if (left === undefined) return configured;
  // The floor wins over the cap: a tool configured below the comfortable pace still gets it.
  return Math.max(floorMs, Math.min(configured, Math.ceil(left)));
}
