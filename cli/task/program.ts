/**
 * `mcp-task`: try, script and watch task tools on any MCP server, in either task dialect.
 * Commands: tools, call, watch, answer, cancel, result, list. All behaviour is here; the bin
 * only wires the process. Exit codes in `exit-codes.ts`.
 */
import { Command, CommanderError, Option } from 'commander';
import {
  connectTaskClient,
  type DialectChoice,
  isTaskNotFound,
  type TaskClient,
  TaskClientError,
  type TaskServerTarget,
} from '../../src/client/index.js';
import { PACKAGE_VERSION } from '../../src/client/package-version.js';
import { drive, report, settle } from './drive.js';
import { ExitCode, UsageError } from './exit-codes.js';
import { type CliOutput, processOutput } from './output.js';
import { answers, headers, toolArguments } from './values.js';

interface ConnectionFlags {
  stdio?: string;
  header: string[];
  bearer?: string;
  dialect?: '2025' | '2026';
}

const collect = (value: string, previous: string[]) => [...previous, value];

function connectionOptions(command: Command): Command {
  return command
    .option('--stdio <command>', 'run a local server over stdio instead of a URL (then omit <url>)')
    .option('-H, --header <name: value>', 'add an HTTP header (repeatable)', collect, [])
    .option('--bearer <token>', 'send Authorization: Bearer <token>')
    .addOption(new Option('--dialect <version>', 'force a task dialect').choices(['2025', '2026']));
}

/** Splits positionals: with --stdio there is no URL in front. */
function positionals(flags: ConnectionFlags, values: string[], names: string[]): { target: string; rest: string[] } {
  const expected = flags.stdio !== undefined ? names.length : names.length + 1;
  if (values.length !== expected) {
    const want = [...(flags.stdio !== undefined ? [] : ['<url>']), ...names.map((n) => `<${n}>`)].join(' ');
    throw new UsageError(`expected ${want}, got ${values.length} argument(s)`);
  }
  if (flags.stdio !== undefined) return { target: `--stdio "${flags.stdio}"`, rest: values };
  const [url, ...rest] = values as [string, ...string[]];
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UsageError(`${url}: expected an http(s) URL (or --stdio "<command>")`);
  }
  return { target: url, rest };
}

async function open(flags: ConnectionFlags, target: string): Promise<TaskClient> {
  const serverTarget: TaskServerTarget = flags.stdio !== undefined ? stdioTarget(flags.stdio) : target;
  return connectTaskClient(serverTarget, {
    ...(flags.dialect && { dialect: flags.dialect as DialectChoice }),
    headers: headers(flags.header),
    ...(flags.bearer !== undefined && { bearer: flags.bearer }),
    clientInfo: { name: 'mcp-task', version: PACKAGE_VERSION },
  });
}

/** `--stdio "node server.js --stdio"`: split on whitespace, honouring simple quotes. */
function stdioTarget(line: string): TaskServerTarget {
  const words = line.match(/"[^"]*"|'[^']*'|\S+/g)?.map((w) => w.replace(/^(["'])(.*)\1$/, '$2')) ?? [];
  const [command, ...args] = words;
  if (!command) throw new UsageError('--stdio: expected a command');
  return { command, args, env: process.env as Record<string, string> };
}

const interactive = () => Boolean(process.stdin.isTTY && process.stdout.isTTY);

async function withClient<T>(flags: ConnectionFlags, target: string, body: (client: TaskClient) => Promise<T>) {
  const client = await open(flags, target);
  try {
    return await body(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

export function buildProgram(setExit: (code: number) => void, out: CliOutput = processOutput): Command {
  const program = new Command('mcp-task')
    .description(
      'Call, watch, answer and cancel MCP task tools, on any server that speaks 2025-11-25 or 2026-07-28 tasks.',
    )
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => out.stdout(text), writeErr: (text) => out.stderr(text) })
    .exitOverride();

  connectionOptions(
    program
      .command('tools')
      .description('list the server’s tools')
      .argument('[url]', 'the server’s Streamable HTTP URL')
      .option('--json', 'print JSON'),
  ).action(async (url: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    const { target } = positionals(flags, url ? [url] : [], []);
    await withClient(flags, target, async (client) => {
      const tools = await client.listTools();
      if (flags.json) out.stdout(`${JSON.stringify({ dialect: client.dialect, tools })}\n`);
      else
        for (const tool of tools)
          out.stdout(
            `${tool.name}${tool.taskSupport ? ` [task: ${tool.taskSupport}]` : ''}${tool.description ? `  ${tool.description}` : ''}\n`,
          );
    });
    setExit(ExitCode.Completed);
  });

  connectionOptions(
    program
      .command('call')
      .description('start a task and follow it to its result')
      .argument('<url-and-tool...>', '<url> <tool>, or <tool> with --stdio')
      .option('-a, --arg <key=value>', 'one argument; the value is read by the tool’s schema (repeatable)', collect, [])
      .option('--json [object]', 'print one JSON document; with a value, the arguments as a JSON object')
      .option(
        '--answer <key=json>',
        'answer a question in advance (repeatable): a JSON object, or decline',
        collect,
        [],
      )
      .option('--detach', 'print the task id and exit without waiting')
      .option('--no-task', 'make a plain call, not a task'),
  ).action(async (values: string[], flags: ConnectionFlags & CallFlags) => {
    const { target, rest } = positionals(flags, values, ['tool']);
    const tool = rest[0] as string;
    const given = answers(flags.answer);
    const json = flags.json !== undefined;
    await withClient(flags, target, async (client) => {
      const schema = (await client.listTools()).find((t) => t.name === tool);
      if (!schema) throw new UsageError(`${tool}: the server has no such tool`);
      const args = toolArguments(
        flags.arg,
        typeof flags.json === 'string' ? flags.json : undefined,
        schema.inputSchema,
      );
      const call = await client.call(tool, args, { task: flags.task !== false });
      if (flags.detach && call.taskId) {
        const task = await call.status();
        out.stdout(json ? `${JSON.stringify({ taskId: call.taskId, status: task.status })}\n` : `${call.taskId}\n`);
        return setExit(ExitCode.Completed);
      }
      setExit(await drive(call, { json, interactive: interactive(), answers: given, target, out }));
    });
  });

  connectionOptions(
    program
      .command('watch')
      .description('follow a task until it ends, answering its questions')
      .argument('<url-and-task...>', '<url> <taskId>, or <taskId> with --stdio')
      .option('--json', 'print one JSON document')
      .option('--answer <key=json>', 'answer a question (repeatable)', collect, []),
  ).action(async (values: string[], flags: ConnectionFlags & { json?: boolean; answer: string[] }) => {
    const { target, rest } = positionals(flags, values, ['taskId']);
    const given = answers(flags.answer);
    await withClient(flags, target, async (client) => {
      const task = client.task(rest[0] as string);
      await task.status();
      setExit(
        await drive(task, { json: Boolean(flags.json), interactive: interactive(), answers: given, target, out }),
      );
    });
  });

  connectionOptions(
    program
      .command('answer')
      .description('answer a task’s open questions and exit')
      .argument('<url-and-task...>', '<url> <taskId>, or <taskId> with --stdio')
      .requiredOption('--answer <key=json>', 'the answer (repeatable): a JSON object, or decline', collect, []),
  ).action(async (values: string[], flags: ConnectionFlags & { answer: string[] }) => {
    const { target, rest } = positionals(flags, values, ['taskId']);
    const given = answers(flags.answer);
    await withClient(flags, target, async (client) => {
      const task = client.task(rest[0] as string);
      for (const [key, answer] of given) await task.respond(key, answer);
      // 2025-11-25 answers travel on the task's result stream: stay until the task moved on.
      const status = await task.status();
      out.stdout(`${status.taskId}: ${status.status}\n`);
    });
    setExit(ExitCode.Completed);
  });

  connectionOptions(
    program
      .command('cancel')
      .description('cancel a task')
      .argument('<url-and-task...>', '<url> <taskId>, or <taskId> with --stdio')
      .option('--json', 'print JSON'),
  ).action(async (values: string[], flags: ConnectionFlags & { json?: boolean }) => {
    const { target, rest } = positionals(flags, values, ['taskId']);
    await withClient(flags, target, async (client) => {
      const status = await client.task(rest[0] as string).cancel();
      out.stdout(flags.json ? `${JSON.stringify(status)}\n` : `${status.taskId}: ${status.status}\n`);
    });
    setExit(ExitCode.Completed);
  });

  connectionOptions(
    program
      .command('result')
      .description('wait for a task’s result and print it')
      .argument('<url-and-task...>', '<url> <taskId>, or <taskId> with --stdio')
      .option('--json', 'print one JSON document'),
  ).action(async (values: string[], flags: ConnectionFlags & { json?: boolean }) => {
    const { target, rest } = positionals(flags, values, ['taskId']);
    await withClient(flags, target, async (client) => {
      const taskId = rest[0] as string;
      const outcome = await settle(client.task(taskId), taskId);
      setExit(report(outcome, { json: Boolean(flags.json), target, out }, outcome.status === 'completed' ? 0 : 1));
    });
  });

  connectionOptions(
    program
      .command('list')
      .description('list your tasks (2025-11-25 servers that offer tasks/list)')
      .argument('[url]', 'the server’s Streamable HTTP URL')
      .option('--json', 'print JSON'),
  ).action(async (url: string | undefined, flags: ConnectionFlags & { json?: boolean }) => {
    const { target } = positionals(flags, url ? [url] : [], []);
    // Listing exists only in 2025-11-25; ask for that dialect unless told otherwise.
    await withClient({ dialect: '2025', ...flags }, target, async (client) => {
      const all = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTasks(cursor);
        all.push(...page.tasks);
        cursor = page.nextCursor;
      } while (cursor !== undefined && all.length < 10_000);
      if (flags.json) out.stdout(`${JSON.stringify({ tasks: all })}\n`);
      else
        for (const task of all)
          out.stdout(`${task.taskId}  ${task.status}${task.statusMessage ? `  ${task.statusMessage}` : ''}\n`);
    });
    setExit(ExitCode.Completed);
  });

  return program;
}

interface CallFlags {
  arg: string[];
  json?: string | boolean;
  answer: string[];
  detach?: boolean;
  task?: boolean;
}

/** Runs `mcp-task` with `argv` (without node and script) and resolves with the exit code. */
export async function runTaskCli(argv: readonly string[], out: CliOutput = processOutput): Promise<number> {
  let code: number = ExitCode.Completed;
  const program = buildProgram((value) => {
    code = value;
  }, out);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError)
      return error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version'
        ? ExitCode.Completed
        : ExitCode.Usage;
    if (error instanceof UsageError) {
      out.stderr(`mcp-task: ${error.message}\n`);
      return ExitCode.Usage;
    }
    if (isTaskNotFound(error)) {
      out.stderr(`mcp-task: ${(error as Error).message}\n`);
      return ExitCode.Failed;
    }
    const message =
      error instanceof TaskClientError ? error.message : error instanceof Error ? error.message : String(error);
    out.stderr(`mcp-task: ${message}\n`);
    return ExitCode.Failed;
  }
}
