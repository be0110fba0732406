/** `mcp-task` exit codes; scripts rely on them, so a code never changes its meaning. */
export const ExitCode = {
  Completed: 0,
  Failed: 1,
  Usage: 2,
  WaitingForInput: 3,
  Interrupted: 130,
} as const;

/** A usage error: bad flags or values. Exits 2 with its message. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
