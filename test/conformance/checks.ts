/** Reading and judging what one conformance scenario wrote: its `checks.json` files. */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Every check under a scenario's output folder (the CLI writes one folder per run). */
export async function readChecks(dir: string): Promise<Check[]> {
  const checks: Check[] = [];
  if (!existsSync(dir)) return checks;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name, 'checks.json');
    if (entry.isDirectory() && existsSync(file)) checks.push(...(JSON.parse(await readFile(file, 'utf8')) as Check[]));
  }
  return checks;
}

/**
 * Why a scenario did not pass, or nothing when it did: every FAILURE, and "nothing passed" when
 * no check is a SUCCESS (a scenario whose checks were all SKIPPED, INFO or WARNING tested
 * nothing, so it cannot count as passed).
 */
export function scenarioProblems(checks: readonly Check[]): string[] {
  const problems = checks
    .filter((check) => check.status === 'FAILURE')
    .map((check) => `FAILURE ${check.id}: ${check.errorMessage ?? check.name}`);
  if (!checks.some((check) => check.status === 'SUCCESS')) {
    const seen = checks.map((check) => `${check.id} ${check.status}`).join(', ') || 'no checks at all';
    problems.push(`no check passed (${seen})`);
  }
  return problems;
}
