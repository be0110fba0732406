/** The folder a project is written into: whether it is safe to write there, and emptying it on request. */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

/** Entries that do not make a folder "non-empty": a fresh `git init` may come first. */
const IGNORED = new Set(['.git']);

export type TargetState = 'missing' | 'empty' | 'not-empty' | 'not-a-directory';

export function targetState(directory: string): TargetState {
  if (!existsSync(directory)) return 'missing';
  if (!statSync(directory).isDirectory()) return 'not-a-directory';
  return readdirSync(directory).some((entry) => !IGNORED.has(entry)) ? 'not-empty' : 'empty';
}

/** Deletes everything in `directory` except `.git`. */
export function emptyDirectory(directory: string): void {
  for (const entry of readdirSync(directory)) {
    if (!IGNORED.has(entry)) rmSync(path.join(directory, entry), { recursive: true, force: true });
  }
}
