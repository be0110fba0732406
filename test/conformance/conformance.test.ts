/**
 * The official conformance scenarios (`@modelcontextprotocol/conformance`, a pinned
 * devDependency) against the conformance fixture, through scripts/conformance/run.mjs (the CLI
 * wants Node 22; the script starts it on the Node running the tests). A scenario passes when the
 * CLI exits 0, no check in its checks.json is a FAILURE, and at least one is a SUCCESS: a
 * scenario whose checks were all SKIPPED tested nothing. The fixture contract: the tools listed
 * in examples/conformance-fixture.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { type RunningServer, startServer } from '../e2e/support.js';
import { readChecks, scenarioProblems } from './checks.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const runner = path.join(repoRoot, 'scripts/conformance/run.mjs');

/** The scenarios of the tasks extension (2026-07-28) that test something in this release of the suite. */
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-request-headers',
  'tasks-required-task-error',
  'tasks-mrtr-input',
  'tasks-dispatch-and-envelope',
  'tasks-mrtr-composition',
];

/**
 * The general server scenarios that apply to a server of tools (the README's conformance
 * section lists the others and why they do not apply).
 */
const GENERAL_SCENARIOS = [
  'server-initialize',
  'server-session-lifecycle',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'dns-rebinding-protection',
  'http-header-validation',
  'server-sse-multiple-streams',
];

/**
 * Placeholders in this release of the suite: they report only SKIPPED, so they cannot pass. Each
 * is pinned as such, so the day the suite fills one in, this fails and it moves to the lists above.
 * Our own tests cover what they will check (status push: test/e2e/status-push.test.ts).
 */
const PLACEHOLDER_SCENARIOS = ['tasks-status-notifications'];

let running: RunningServer;
let outputs: string;

beforeAll(async () => {
  running = await startServer(app);
  outputs = await mkdtemp(path.join(tmpdir(), 'conformance-'));
});

afterAll(async () => {
  await running?.close();
  if (outputs) await rm(outputs, { recursive: true, force: true });
});

describe('official conformance scenarios', () => {
  for (const scenario of [...TASK_SCENARIOS, ...GENERAL_SCENARIOS]) {
    it(scenario, async () => {
      const out = path.join(outputs, scenario);
      const { code, output } = await run(['server', '--url', running.url, '--scenario', scenario, '-o', out]);
      const checks = await readChecks(out);
      expect(scenarioProblems(checks), `${scenario}:\n${output}`).toEqual([]);
      expect(code, output).toBe(0);
    }, 60_000);
  }

  for (const scenario of PLACEHOLDER_SCENARIOS) {
    it(`${scenario} is still a placeholder (every check SKIPPED)`, async () => {
      const out = path.join(outputs, scenario);
      const { output } = await run(['server', '--url', running.url, '--scenario', scenario, '-o', out]);
      const checks = await readChecks(out);
      expect(checks.length, output).toBeGreaterThan(0);
      expect(
        checks.filter((check) => check.status !== 'SKIPPED'),
        `${scenario} now checks something: run it with the others\n${output}`,
      ).toEqual([]);
    }, 60_000);
  }
});

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [runner, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}
