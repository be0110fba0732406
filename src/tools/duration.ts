/**
 * Durations as `ctx.sleep` takes them: milliseconds, or a number with a unit (`'90s'`,
 * `'15m'`, `'2h'`, `'250ms'`, `'1.5d'`). Bounded: negative, non-finite, unparseable or longer
 * than `MAX_SLEEP_MS` (a year) is refused with a `RangeError` naming the value.
 */
import { MAX_SLEEP_MS } from '../engine/sleeps.js';

/** What `ctx.sleep` accepts: milliseconds, or a number and a unit (`ms`, `s`, `m`, `h`, `d`). */
export type Duration = number | `${number}${DurationUnit}` | `${number} ${DurationUnit}`;

/** The units a duration string may end in: milliseconds, seconds, minutes, hours, days. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

const UNIT_MS: Readonly<Record<DurationUnit, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)$/;

/**
 * The milliseconds `duration` stands for, rounded up to a whole millisecond. Throws a
 * `RangeError` naming the value for anything else than a number of 0 or more (or such a string)
 * up to a year.
 */
export function parseDuration(duration: Duration | string): number {
  let ms: number;
  if (typeof duration === 'number') {
    ms = duration;
  } else if (typeof duration === 'string') {
    const match = DURATION.exec(duration.trim());
    if (!match) {
      throw new RangeError(
        `ctx.sleep: ${JSON.stringify(duration)} is not a duration; give milliseconds or a number with ms, s, m, h or d ('90s', '15m', '2h')`,
      );
    }
    ms = Number(match[1]) * UNIT_MS[match[2] as DurationUnit];
  } else {
    throw new RangeError(`ctx.sleep: a duration is milliseconds or a string such as '90s', got ${typeof duration}`);
  }
  const shown = typeof duration === 'number' ? String(duration) : JSON.stringify(duration);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`ctx.sleep: the duration must be 0 or more milliseconds, got ${shown}`);
  }
  if (ms > MAX_SLEEP_MS) {
    throw new RangeError(`ctx.sleep: ${shown} is longer than the longest sleep, 365 days`);
  }
  return Math.ceil(ms);
}
