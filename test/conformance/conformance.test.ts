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

/** The protocol revisions this server speaks that the suite has requirements for. */
type Revision = '2025-11-25' | '2026-07-28';
const BOTH: readonly Revision[] = ['2025-11-25', '2026-07-28'];
const LEGACY: readonly Revision[] = ['2025-11-25'];
const MODERN: readonly Revision[] = ['2026-07-28'];

/**
 * The general server scenarios, each run at every revision it applies to (the suite runs a
 * scenario at one revision's wire: a stateful session for 2025-11-25, per-request `_meta` for
 * 2026-07-28, so one run does not cover the other). docs/guide/conformance.md says what each
 * checks. The diagnostic tools they call are stateless: no task, nothing kept between calls but
 * the sealed request state a 2026-07-28 call carries itself.
 */
const GENERAL_SCENARIOS: Record<string, readonly Revision[]> = {
  'server-initialize': LEGACY,
  'server-session-lifecycle': LEGACY,
  'server-stateless': MODERN,
  'logging-set-level': LEGACY,
  ping: LEGACY,
  'tools-list': BOTH,
  'tools-call-simple-text': BOTH,
  'tools-call-image': BOTH,
  'tools-call-audio': BOTH,
  'tools-call-embedded-resource': BOTH,
  'tools-call-mixed-content': BOTH,
  'tools-call-with-logging': LEGACY,
  'tools-call-error': BOTH,
  'tools-call-with-progress': BOTH,
  'tools-call-elicitation': LEGACY,
  'elicitation-sep1034-defaults': LEGACY,
  'json-schema-2020-12': BOTH,
  'dns-rebinding-protection': BOTH,
  'http-header-validation': MODERN,
  'server-sse-multiple-streams': BOTH,
  'input-required-result-basic-elicitation': MODERN,
  'input-required-result-request-state': MODERN,
  'input-required-result-multi-round': MODERN,
  'input-required-result-missing-input-response': MODERN,
  'input-required-result-result-type': MODERN,
  'input-required-result-unsupported-methods': MODERN,
  'input-required-result-tampered-state': MODERN,
  'input-required-result-ignore-extra-params': MODERN,
  'input-required-result-validate-input': MODERN,
};

/**
 * Placeholders in this release of the suite: they report only SKIPPED, so they cannot pass. Each
 * is pinned as such, so the day the suite fills one in, this fails and it moves to the lists above.
 * Our own tests cover what they will check (status push: test/e2e/status-push.test.ts).
 */
const PLACEHOLDER_SCENARIOS = ['tasks-status-notifications'];

/**
 * Server scenarios of this release that test a feature this framework does not offer, each with
 * the feature. A server without the feature cannot pass them: they call methods it does not
 * serve (`-32601`) or ask the client for what it never asks. The test below pins the suite's
 * list against these four lists, so a scenario added by a new release of the suite is noticed.
 */
const NOT_APPLICABLE: Record<string, string> = {
  'completion-complete': 'completions (completion/complete)',
  'tools-call-sampling': 'sampling: the tool must ask the client for sampling/createMessage',
  'elicitation-sep1330-enums':
    'titled and multi-select enum forms; @NeedsInput answers are flat objects of primitives and string enums',
  'server-sse-polling': 'SSE resumption (an event store, test_reconnection closing the stream mid-call)',
  'resources-list': 'resources',
  'resources-read-text': 'resources',
  'resources-read-binary': 'resources',
  'resources-templates-read': 'resource templates',
  'resources-subscribe': 'resource subscriptions',
  'resources-unsubscribe': 'resource subscriptions',
  'sep-2164-resource-not-found': 'resources: its error for an unknown resource of a resources/read',
  'sep-2640-skills-directory': 'the skills extension (resources)',
  'sep-2640-skills-enumeration': 'the skills extension (resources)',
  'sep-2640-skills-manifest': 'the skills extension (resources)',
  'prompts-list': 'prompts',
  'prompts-get-simple': 'prompts',
  'prompts-get-with-args': 'prompts',
  'prompts-get-embedded-resource': 'prompts',
  'prompts-get-with-image': 'prompts',
  caching: 'caching hints on prompts/list, resources/list, resources/templates/list and resources/read',
  'http-custom-header-server-validation': 'x-mcp-header tool parameters mirrored in Mcp-Param-* headers',
  'input-required-result-basic-sampling': 'sampling: a sampling/createMessage input request',
  'input-required-result-basic-list-roots': 'roots: a roots/list input request',
  'input-required-result-multiple-input-requests': 'sampling and roots input requests next to an elicitation',
  'input-required-result-capability-check': 'sampling: a client that declares only sampling must be asked through it',
  'input-required-result-non-tool-request': 'prompts: an input_required result of prompts/get',
};

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
  const runs = [
    ...TASK_SCENARIOS.map((scenario) => ({ scenario, revision: undefined })),
    ...Object.entries(GENERAL_SCENARIOS).flatMap(([scenario, revisions]) =>
      revisions.map((revision) => ({ scenario, revision })),
    ),
  ];
  for (const { scenario, revision } of runs) {
    const label = revision ? `${scenario} @ ${revision}` : scenario;
    it(label, async () => {
      const out = path.join(outputs, revision ? `${scenario}-${revision}` : scenario);
      const args = ['server', '--url', running.url, '--scenario', scenario, '-o', out];
      const { code, output } = await run(revision ? [...args, '--spec-version', revision] : args);
      const checks = await readChecks(out);
      expect(scenarioProblems(checks), `${label}:\n${output}`).toEqual([]);
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

describe('the scenario list of the pinned release', () => {
  it('every server scenario is run at each revision it applies to, pinned as a placeholder, or not applicable with its reason', async () => {
    const { code, output } = await run(['list']);
    expect(code, output).toBe(0);
    const serverSection = output.slice(output.indexOf('Server scenarios'), output.indexOf('Client scenarios'));
    const listed = new Map(
      [...serverSection.matchAll(/^\s*- (\S+) \[([^\]]*)\]/gm)].map((match) => [match[1], match[2]?.split(',') ?? []]),
    );
    expect(listed.size).toBeGreaterThan(0);
    const accounted = [
      ...TASK_SCENARIOS,
      ...Object.keys(GENERAL_SCENARIOS),
      ...PLACEHOLDER_SCENARIOS,
      ...Object.keys(NOT_APPLICABLE),
    ];
    expect([...listed.keys()].sort()).toEqual([...accounted].sort());
    for (const [scenario, revisions] of Object.entries(GENERAL_SCENARIOS)) {
      const applies = BOTH.filter((revision) => listed.get(scenario)?.includes(revision));
      expect(revisions, scenario).toEqual(applies);
    }
  });
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
