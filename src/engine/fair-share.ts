/**
 * Fair shares between principals: the words every runtime uses for a task that waits because
 * its principal already runs `maxRunningTasksPerPrincipal` tasks. One place, so both runtimes
 * say the same thing.
 */

/** The `statusMessage` of a task waiting for its principal's share. */
export function shareQueuedMessage(running: number): string {
  return `queued (${running} running for this caller)`;
}

/** Whether `message` is a runtime's "waiting to start" note (`queued`, or a share's wait). */
export function isQueuedNote(message: string | null | undefined): boolean {
  return message === 'queued' || (message?.startsWith('queued (') ?? false);
}
