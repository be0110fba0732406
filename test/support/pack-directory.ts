/**
 * Vitest global setup: one folder per test run where the first test that needs the packed
 * packages packs them (see packed-packages.ts) and every later one reuses the tarballs. Packing
 * builds the framework into dist/, so two test files packing at once would build over each
 * other; one pack per run also keeps the run shorter. Nothing is packed here: a run that needs
 * no tarball only pays for an empty folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's packed tarballs go: see test/support/packed-packages.ts. */
    packDirectory: string;
  }
}

export default function setup(project: TestProject): () => void {
  const directory = mkdtempSync(path.join(tmpdir(), 'mcp-task-server-packed-'));
  project.provide('packDirectory', directory);
  return () => rmSync(directory, { recursive: true, force: true });
}
