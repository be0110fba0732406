/**
 * Where `mcp-task` writes. Apart from `program.ts` so that the command and the task driver it
 * calls (`drive.ts`) both take it without importing each other.
 */

/** Where the command writes; the bin passes the process's streams, tests their own. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The process's own streams. */
export const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
