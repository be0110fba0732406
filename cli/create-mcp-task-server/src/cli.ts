/**
 * `create-mcp-task-server`: decides the directory, package name and template (from the arguments,
 * else by asking in a terminal, else the defaults), writes the project and prints the next steps.
 * Exit codes: 0 created, 1 refused (bad package name, folder not empty, unknown template, declined),
 * 2 bad usage.
 */
import path from 'node:path';
import { type Arguments, parseArguments, USAGE } from './arguments.js';
import { detectPackageManager, nextSteps } from './package-manager.js';
import { packageNameProblems, toValidPackageName } from './package-name.js';
import { PromptCancelled, type Prompter } from './prompts.js';
import { emptyDirectory, targetState } from './target-directory.js';
import { DEFAULT_TEMPLATE, findTemplatesRoot, listTemplates, templateDirectory } from './templates.js';
import { writeProject } from './write-project.js';

export interface CliIo {
  readonly cwd: string;
  /** `npm_config_user_agent` of the environment: which package manager the next steps name. */
  readonly userAgent: string | undefined;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Present in a terminal: asks for what the arguments leave open. */
  readonly prompter?: Prompter;
  /** Where the `template-*` folders are. Default: the package's own, or the repository's. */
  readonly templatesRoot?: string;
}

export const DEFAULT_DIRECTORY = 'my-task-server';

/** Why the project was not written; the message is shown as is. */
class Refusal extends Error {}

export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArguments(argv);
  if (typeof parsed === 'string') {
    io.stderr(`create-mcp-task-server: ${parsed}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  try {
    await create(parsed, io);
    return 0;
  } catch (error) {
    if (error instanceof PromptCancelled) {
      io.stderr('\ncreate-mcp-task-server: cancelled; nothing was written\n');
      return 1;
    }
    if (!(error instanceof Refusal)) throw error;
    io.stderr(`create-mcp-task-server: ${error.message}\n`);
    return 1;
  }
}

async function create(args: Arguments, io: CliIo): Promise<void> {
  const directory =
    args.directory ?? (await io.prompter?.text('Project directory:', DEFAULT_DIRECTORY)) ?? DEFAULT_DIRECTORY;
  const target = path.resolve(io.cwd, directory.trim() || '.');
  const shown = path.relative(io.cwd, target) || '.';

  const packageName = await choosePackageName(args.name, path.basename(target), io.prompter);

  const templatesRoot = io.templatesRoot ?? findTemplatesRoot();
  const templates = listTemplates(templatesRoot);
  const template =
    args.template ??
    (io.prompter && templates.length > 1 ? await io.prompter.choose('Template:', templates) : DEFAULT_TEMPLATE);
  if (!templates.includes(template)) {
    throw new Refusal(`there is no template "${template}"; choose one of: ${templates.join(', ')}`);
  }

  // Last, once every choice is settled: this may delete files.
  await prepareTarget(target, shown, args.force, io.prompter);
  const files = writeProject({
    templateDirectory: templateDirectory(templatesRoot, template),
    targetDirectory: target,
    packageName,
  });
  const steps = nextSteps(detectPackageManager(io.userAgent), shown);
  io.stdout(
    [
      `Created ${packageName} in ${target} (template "${template}", ${files.length} files).`,
      '',
      'Next steps:',
      ...steps.map((step) => `  ${step}`),
      '',
      // The templates differ (HTTP or stdio, workers or none): each README says how to connect a client.
      'Then see README.md for how to connect an MCP client, the scripts and what is where.',
      '',
    ].join('\n'),
  );
}

/** Refuses a target that is a file, or a folder with files in it unless `--force` or a "yes" allows emptying it. */
async function prepareTarget(target: string, shown: string, force: boolean, prompter: Prompter | undefined) {
  const state = targetState(target);
  if (state === 'not-a-directory') throw new Refusal(`${shown} exists and is not a directory`);
  if (state !== 'not-empty') return;
  const allowed =
    force || (await prompter?.confirm(`${shown} is not empty. Delete everything in it (except .git) and continue?`));
  if (!allowed) {
    throw new Refusal(
      prompter
        ? `left ${shown} as it was; nothing was written`
        : `${shown} is not empty; choose another directory, or pass --force to delete what is in it (except .git)`,
    );
  }
  emptyDirectory(target);
}

/** `--name` if valid, else the directory's name if valid, else (in a terminal) what the user types. */
async function choosePackageName(given: string | undefined, directoryName: string, prompter: Prompter | undefined) {
  if (given !== undefined) {
    const problems = packageNameProblems(given);
    if (problems.length > 0) throw new Refusal(invalidName(given, problems, 'pass another with --name'));
    return given;
  }
  let candidate = directoryName;
  let problems = packageNameProblems(candidate);
  if (problems.length === 0) return candidate;
  if (!prompter) {
    throw new Refusal(
      invalidName(candidate, problems, `pass one with --name, such as --name ${toValidPackageName(candidate)}`),
    );
  }
  while (problems.length > 0) {
    candidate = await prompter.text(
      `${invalidName(candidate, problems)}\nPackage name:`,
      toValidPackageName(candidate),
    );
    problems = packageNameProblems(candidate);
  }
  return candidate;
}

function invalidName(name: string, problems: readonly string[], advice?: string): string {
  return `"${name}" is not a valid npm package name: ${problems.join('; ')}${advice ? `; ${advice}` : ''}`;
}
