/** The verdict on one conformance scenario, and the Node 20 `globSync` the runner hands the CLI. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Check, scenarioProblems } from './checks.js';

const check = (id: string, status: Check['status']): Check => ({ id, name: id, status });

describe('scenarioProblems', () => {
  it('passes a scenario with successes and no failure', () => {
    expect(scenarioProblems([check('a', 'SUCCESS'), check('b', 'SKIPPED'), check('c', 'INFO')])).toEqual([]);
  });

  it('fails a scenario whose checks were all skipped', () => {
    expect(scenarioProblems([check('a', 'SKIPPED'), check('b', 'SKIPPED')])).toEqual([
      'no check passed (a SKIPPED, b SKIPPED)',
    ]);
  });

  it('fails a scenario with only informational checks, or none', () => {
    expect(scenarioProblems([check('a', 'INFO'), check('b', 'WARNING')])).toHaveLength(1);
    expect(scenarioProblems([])).toEqual(['no check passed (no checks at all)']);
  });

  it('names every failure', () => {
    const failed = { ...check('b', 'FAILURE'), errorMessage: 'wrong status' };
    expect(scenarioProblems([check('a', 'SUCCESS'), failed])).toEqual(['FAILURE b: wrong status']);
  });
});

describe('the globSync of scripts/conformance', async () => {
  // A variable specifier: the module is plain JavaScript, typed here by what the CLI uses of it.
  const specifier = new URL('../../scripts/conformance/fs-with-glob.mjs', import.meta.url).href;
  const { globSync } = (await import(specifier)) as {
    globSync: (pattern: string | string[], options?: { cwd?: string }) => string[];
  };
  const root = mkdtempSync(path.join(tmpdir(), 'fs-with-glob-'));
  for (const file of ['checks.json', 'a/checks.json', 'a/b/checks.json', 'a/other.json', 'a/b/checks.json.bak']) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '[]');
  }
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('matches `**/name` at any depth, the top included, relative to cwd', () => {
    expect(globSync('**/checks.json', { cwd: root }).sort()).toEqual([
      'a/b/checks.json',
      'a/checks.json',
      'checks.json',
    ]);
  });

  it('matches `*` within one segment only', () => {
    expect(globSync('a/*.json', { cwd: root }).sort()).toEqual(['a/checks.json', 'a/other.json']);
    expect(globSync(['*/b/*'], { cwd: root }).sort()).toEqual(['a/b/checks.json', 'a/b/checks.json.bak']);
  });

  it('finds nothing under a missing folder', () => {
    expect(globSync('**/checks.json', { cwd: path.join(root, 'missing') })).toEqual([]);
  });
});
