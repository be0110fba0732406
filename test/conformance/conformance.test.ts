/**
 * The official conformance scenarios (`@modelcontextprotocol/conformance`, pinned) against the
 * conformance fixture, through ../shared/tools/conformance-node20/run (the CLI needs Node 22;
 * the wrapper starts it on Node 20). A scenario passes when the CLI exits 0 and no check in its
 * checks.json is a FAILURE. The fixture contract: shared/docs/protocol.md §7.1.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { type RunningServer, startServer } from '../e2e/support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const runner = path.resolve(repoRoot, '../shared/tools/conformance-node20/run');
const available = existsSync(runner);
if (!available) {
  const notice = `conformance runner not found at ${runner}`;
  // In CI a missing runner is a broken checkout, not a reason to go green.
  if (process.env.CI) throw new Error(notice);
  console.warn(`SKIPPING conformance scenarios: ${notice}`);
}

/** All ten scenarios of the tasks extension (2026-07-28). */
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-request-headers',
  'tasks-required-task-error',
  'tasks-status-notifications',
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

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

let running: RunningServer;
let outputs: string;

beforeAll(async () => {
  if (!available) return;
  running = await startServer(app);
  outputs = await mkdtemp(path.join(tmpdir(), 'conformance-'));
});

afterAll(async () => {
  await running?.close();
  if (outputs) await rm(outputs, { recursive: true, force: true });
});

describe.skipIf(!available)('official conformance scenarios', () => {
  for (const scenario of [...TASK_SCENARIOS, ...GENERAL_SCENARIOS]) {
    it(scenario, async () => {
      const out = path.join(outputs, scenario);
      const { code, output } = await run(['server', '--url', running.url, '--scenario', scenario, '-o', out]);
      const checks = await readChecks(out);
      const failures = checks.filter((check) => check.status === 'FAILURE');
      expect(failures, `${scenario} failed:\n${output}`).toEqual([]);
      expect(code, output).toBe(0);
      expect(checks.length).toBeGreaterThan(0);
    }, 60_000);
  }
});

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [runner, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
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

async function readChecks(dir: string): Promise<Check[]> {
  const checks: Check[] = [];
  if (!existsSync(dir)) return checks;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name, 'checks.json');
    if (entry.isDirectory() && existsSync(file)) checks.push(...(JSON.parse(await readFile(file, 'utf8')) as Check[]));
  }
  return checks;
}
