#!/usr/bin/env node
/**
 * The whole test run, as CI and the README's quick start call it (`npm test`): type check,
 * generated files up to date, lint, then every test suite. Ends with one summary line
 * (`tests: N passed, N failed, N skipped`) that CI logs can be read by.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';

const steps = [
  ['type check', 'npm', ['run', '--silent', 'typecheck']],
  ['generated files are current', 'npm', ['run', '--silent', 'generate:check']],
  ['lint', 'npm', ['run', '--silent', 'lint']],
];

for (const [name, command, args] of steps) {
  process.stdout.write(`\n== ${name}\n`);
  const { status } = spawnSync(command, args, { stdio: 'inherit' });
  if (status !== 0) {
    process.stdout.write(`\n${name} failed\n`);
    process.exit(status ?? 1);
  }
}

process.stdout.write('\n== tests\n');
mkdirSync('.tmp', { recursive: true });
const report = '.tmp/vitest-report.json';
rmSync(report, { force: true });
const vitest = spawnSync(
  'npx',
  ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
try {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = results.numPendingTests + results.numTodoTests;
  process.stdout.write(
    `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
  );
} catch {
  process.stdout.write('\ntests: the test runner wrote no report\n');
}
process.exit(vitest.status ?? 1);
