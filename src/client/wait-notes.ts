/**
 * What a task's `statusMessage` says of a durable wait, read from the wire: the server words it
 * (`src/engine/sleeps.ts`; a test keeps the two equal), the client only recognises it.
 */

const SLEEP_NOTE = /^sleeping until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/;

/**
 * When a sleeping task wakes, from its `statusMessage` (`sleeping until 2026-12-01T13:05:00.000Z`
 * while the method waits in `ctx.sleep`), or `undefined` when the message says something else.
 */
export function sleepingUntil(statusMessage: string | null | undefined): Date | undefined {
  const match = statusMessage == null ? null : SLEEP_NOTE.exec(statusMessage);
  return match ? new Date(match[1] as string) : undefined;
}
