/**
 * For worker processes: run until SIGTERM/SIGINT, then close gracefully (running methods get
 * the worker's `shutdownGraceMs`, then their jobs go back to the queue). A second signal stops
 * at once; jobs still locked by this process are then recovered as stalled by other workers.
 */

export interface Closable {
  close(): Promise<void>;
}

export interface RunUntilSignalOptions {
  readonly signals?: readonly NodeJS.Signals[];
  /** Called when a signal arrives (e.g. to log it). */
  readonly onSignal?: (signal: NodeJS.Signals) => void;
  /** Ends the process after closing (default true; tests pass false). */
  readonly exit?: boolean;
}

/** Resolves after the first signal once everything is closed (when `exit` is false). */
export function runWorkersUntilSignal(
  workers: readonly Closable[],
  { signals = ['SIGTERM', 'SIGINT'], onSignal, exit = true }: RunUntilSignalOptions = {},
): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handle = (signal: NodeJS.Signals) => {
      onSignal?.(signal);
      if (stopping) process.exit(130);
      stopping = true;
      void Promise.allSettled(workers.map((worker) => worker.close())).then((results) => {
        for (const signalName of signals) process.off(signalName, handle);
        const failed = results.some((result) => result.status === 'rejected');
        if (exit) process.exit(failed ? 1 : 0);
        resolve();
      });
    };
    for (const signalName of signals) process.on(signalName, handle);
  });
}
