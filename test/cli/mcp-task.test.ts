/**
 * `mcp-task` end to end: in a pseudo-terminal (a prompt answered, Ctrl-C cancelling after it
 * asks) and with piped output (plain lines, `--json`, exit codes 0/1/2/3/130), against our
 * fixture server in both dialects, over stdio, and against a bare v1 SDK task server.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answerArguments } from '../../cli/task/drive.js';
import { runTaskCli } from '../../cli/task/program.js';
import { app as fixtureApp } from '../../examples/conformance-fixture/app.js';
import { type BareServer, startBareV1Server } from '../client/bare-v1-task-server.js';
import { type RunningServer, startServer } from '../e2e/support.js';
import { type CliRun, runCli, runInTerminal } from './run-cli.js';

/** The command in this process, for cases where a process of its own adds nothing. */
async function runHere(args: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runTaskCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** `call <server> <tool>` with `--arg key=value` for each of `args`, then `flags`; `server` may be `['--stdio', command]`. */
function call(
  server: string | readonly string[],
  tool: string,
  args: Record<string, string | number>,
  ...flags: string[]
): string[] {
  const options = Object.entries(args).flatMap(([key, value]) => ['--arg', `${key}=${value}`]);
  return ['call', ...[server].flat(), tool, ...options, ...flags];
}

/** The one JSON document a `--json` run printed, once its exit code is checked. */
function jsonOf(run: CliRun, code: number): unknown {
  expect(run.code, run.stderr).toBe(code);
  return JSON.parse(run.stdout);
}

// Each test starts one to three processes of its own; on a loaded machine that takes a while.
vi.setConfig({ testTimeout: 90_000 });

let fixture: RunningServer;
let bare: BareServer;

beforeAll(async () => {
  [fixture, bare] = await Promise.all([
    startServer({ manifest: fixtureApp.manifest, instances: fixtureApp.instances }),
    startBareV1Server(),
  ]);
});

afterAll(async () => {
  await Promise.all([fixture?.close(), bare?.close()]);
});

describe.each(['2025', '2026'])('in a terminal, dialect %s', (dialect) => {
  it('shows progress, asks the question with a prompt built from its schema, prints the result', async () => {
    const terminal = runInTerminal(
      call(fixture.url, 'confirm_delete', { filename: 'notes.txt' }, '--dialect', dialect),
    );
    await terminal.waitFor(/Delete the file\?[\s\S]*Yes \/ . No/);
    expect(terminal.screen()).toContain('Delete notes.txt?');
    terminal.type('y');
    terminal.type('\r');
    expect(await terminal.exited).toBe(0);
    expect(terminal.screen()).toMatch(/Deleted notes\.txt/);
  });

  it('asks before Ctrl-C cancels the task, then exits 130', async () => {
    const terminal = runInTerminal(
      call(fixture.url, 'slow_compute', { seconds: 60, label: 'long' }, '--dialect', dialect),
    );
    await terminal.waitFor(/computing long/);
    terminal.type('\x03');
    await terminal.waitFor(/Cancel task \S+\?/);
    terminal.type('y');
    terminal.type('\r');
    expect(await terminal.exited).toBe(130);
    expect(terminal.screen()).toMatch(/Task \S+ was cancelled/);
  });
});

describe.each(['2025', '2026'])('with piped output, dialect %s', (dialect) => {
  it('prints plain status lines on stderr and the result on stdout', async () => {
    const run = await runCli(call(fixture.url, 'slow_compute', { seconds: 0.2, label: 'x' }, '--dialect', dialect));
    expect(run).toMatchObject({ code: 0, stdout: 'Computed x in 0.2s\n' });
    expect(run.stderr).toMatch(/^status: working\n(.*\n)*status: completed\n/);
    expect(run.stderr).not.toContain('\x1b');
  });

  it('never prompts: an unanswered question prints it, exits 3 and leaves the task for `answer`', async () => {
    const waiting = await runCli(
      call(fixture.url, 'confirm_delete', { filename: 'a' }, '--json', '--dialect', dialect),
    );
    const document = jsonOf(waiting, 3) as { taskId: string };
    expect(document).toMatchObject({
      status: 'input_required',
      questions: [{ key: 'confirm', message: 'Delete a?' }],
    });
    const answered = await runCli([
      'answer',
      fixture.url,
      document.taskId,
      '--answer',
      'confirm={"confirm":true}',
      '--dialect',
      dialect,
    ]);
    expect(answered.code, answered.stderr).toBe(0);
    const result = await runCli(['result', fixture.url, document.taskId, '--json', '--dialect', dialect]);
    expect(jsonOf(result, 0)).toEqual({
      taskId: document.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Deleted a' }] },
    });
  });

  it('takes answers in advance with --answer, and prints exactly one JSON document with --json', async () => {
    const run = await runCli(
      call(
        fixture.url,
        'confirm_delete',
        {},
        '--json',
        '{"filename":"b"}',
        '--answer',
        'confirm={"confirm":false}',
        '--dialect',
        dialect,
      ),
    );
    expect(jsonOf(run, 0)).toMatchObject({ status: 'completed', result: { content: [{ text: 'Kept b' }] } });
    expect(run.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('exits 1 with the JSON-RPC error of a failed task', async () => {
    const run = await runHere(call(fixture.url, 'protocol_error_job', {}, '--json', '--dialect', dialect));
    expect(jsonOf(run, 1)).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'The job hit a protocol error on purpose' },
    });
  });

  it('detaches, then cancels by id', async () => {
    const started = await runCli(
      call(fixture.url, 'slow_compute', { seconds: 60, label: 'd' }, '--detach', '--dialect', dialect),
    );
    expect(started.code).toBe(0);
    const taskId = started.stdout.trim();
    const cancelled = await runHere(['cancel', fixture.url, taskId, '--dialect', dialect]);
    expect(cancelled).toMatchObject({ code: 0, stdout: `${taskId}: cancelled\n` });
    const result = await runHere(['result', fixture.url, taskId, '--json', '--dialect', dialect]);
    expect(jsonOf(result, 1)).toMatchObject({ taskId, status: 'cancelled' });
  });
});

describe('a task id that starts with "-" (a client may choose one)', () => {
  it('is read after `--`, not as an option, and the printed answer command puts it there', async () => {
    const run = await runHere(['result', fixture.url, '--json', '--', '-not-a-task-of-anyone']);
    expect(jsonOf(run, 1)).toMatchObject({
      taskId: '-not-a-task-of-anyone',
      status: 'failed',
      error: { message: expect.stringMatching(/not found/i) },
    });
    expect(answerArguments('-Xy', 'k={}')).toBe("--answer 'k={}' -- -Xy");
    expect(answerArguments('Xy', 'k=decline')).toBe('Xy --answer k=decline');
  });

  it('shell-quotes the answer command it prints: the server chose the id, the key and the sample', () => {
    const taskId = 'x;$(touch /tmp/owned)`id`';
    const answer = `k'ey={"a":"it's \\ $HOME"}`;
    const line = answerArguments(taskId, answer);
    // A POSIX shell reads the line back as exactly these words, running nothing.
    const words = execFileSync('sh', ['-c', `printf '%s\\n' ${line}`], { encoding: 'utf8' });
    expect(words).toBe(`${taskId}\n--answer\n${answer}\n`);
  });
});

describe('usage errors exit 2 with a message naming the problem', () => {
  it.each([
    [['call', 'not-a-url', 'greet'], /not-a-url: expected an http\(s\) URL/],
    [['call', 'http://127.0.0.1:1/mcp'], /expected <url> <tool>/],
    [['frobnicate'], /unknown command/],
    [['call', 'URL', 'slow_compute', '--arg', 'seconds=soon'], /--arg seconds=soon: expected a number/],
    [['call', 'URL', 'confirm_delete', '--answer', 'confirm=yes'], /--answer confirm: not valid JSON/],
    [['call', 'URL', 'nope'], /nope: the server has no such tool/],
  ])('%j', async (args, message) => {
    const run = await runHere(args.map((a) => (a === 'URL' ? fixture.url : a)));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });
});

describe('other servers and transports', () => {
  it('drives a task with a question on a bare v1 SDK task server (2025-11-25)', async () => {
    const tools = await runHere(['tools', bare.url]);
    expect(tools.stdout).toContain('confirm [task: required]');
    const run = await runCli(
      call(bare.url, 'confirm', { what: 'deploy' }, '--answer', 'question-1={"go":true}', '--json'),
    );
    expect(jsonOf(run, 0)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'Did deploy' }] },
    });
    // Its task store binds tasks to the session: a new process lists only its own (none).
    const listed = await runHere(['list', bare.url, '--json']);
    expect(jsonOf(listed, 0)).toEqual({ tasks: [] });
  });

  it('runs a local server over --stdio', async () => {
    const server = `${process.execPath} --conditions=mcp-task-server-source --import tsx examples/conformance-fixture/server.ts --stdio`;
    const run = await runCli(call(['--stdio', server], 'slow_compute', { seconds: 0, label: 'local' }, '--json'));
    expect(jsonOf(run, 0)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'Computed local in 0s' }] },
    });
  });
});
