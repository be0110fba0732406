/**
 * Keeps a log readable through an outage: the same message with the same data is written once
 * per window, and the next one after the window says how many were held back. Different
 * messages pass untouched. Wraps any `Logger`, so it composes with whatever the app logs to.
 */
import type { Logger } from './logger.js';

/** Distinct messages remembered at once; beyond that the oldest is forgotten (and may repeat). */
const MAX_TRACKED = 200;

export function limitRepeats(logger: Logger, windowMs = 30_000, clock: () => number = Date.now): Logger {
  const seen = new Map<string, { at: number; held: number }>();
  const wrap =
    (level: keyof Logger) =>
    (message: string, data?: Record<string, unknown>): void => {
      const key = `${level}\u0000${message}\u0000${data === undefined ? '' : JSON.stringify(data)}`;
      const now = clock();
      const last = seen.get(key);
      if (last && now - last.at < windowMs) {
        last.held++;
        return;
      }
      seen.delete(key);
      if (seen.size >= MAX_TRACKED) seen.delete(seen.keys().next().value as string);
      seen.set(key, { at: now, held: 0 });
      const held = last?.held ?? 0;
      logger[level](message, held > 0 ? { ...data, repeatedSinceLastLog: held } : data);
    };
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
