/**
 * The scaffolder's decisions, in-process: package names, non-empty folders, templates, prompts,
 * next steps, and that the templates ask for the versions this repository builds and tests with.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliIo, run } from '../../cli/create-mcp-task-server/src/cli.js';
import { detectPackageManager, nextSteps } from '../../cli/create-mcp-task-server/src/package-manager.js';
import { packageNameProblems, toValidPackageName } from '../../cli/create-mcp-task-server/src/package-name.js';
import { PromptCancelled, type Prompter } from '../../cli/create-mcp-task-server/src/prompts.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const templatesRoot = path.join(repoRoot, 'templates');

let cwd: string;
let out: string;
let err: string;

beforeEach(() => {
  cwd = mkdtempSync(path.join(tmpdir(), 'create-mcp-task-server-'));
  out = '';
  err = '';
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

function io(extra: Partial<CliIo> = {}): CliIo {
  return {
    cwd,
    userAgent: 'npm/11.0.0 node/v20.20.0 linux x64',
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    templatesRoot,
    ...extra,
  };
}

/** A prompter that gives scripted answers in order and records the questions. */
function scripted(answers: (string | boolean)[]): Prompter & { asked: string[] } {
  const asked: string[] = [];
  const next = (question: string) => {
    asked.push(question);
    if (answers.length === 0) throw new Error(`unexpected question: ${question}`);
    return answers.shift() as string | boolean;
  };
  return {
    asked,
    text: async (question, fallback) => (next(question) as string) || fallback,
    confirm: async (question) => next(question) as boolean,
    choose: async (question) => next(question) as string,
    close: () => {},
  };
}

const read = (...parts: string[]) => readFileSync(path.join(cwd, ...parts), 'utf8');

describe('writing a project', () => {
  it('copies the template, renames _gitignore, names the package and prints the next steps', async () => {
    expect(await run(['my-app'], io())).toBe(0);

    expect(existsSync(path.join(cwd, 'my-app', '.gitignore'))).toBe(true);
    expect(existsSync(path.join(cwd, 'my-app', '_gitignore'))).toBe(false);
    const manifest = JSON.parse(read('my-app', 'package.json'));
    expect(manifest.name).toBe('my-app');
    expect(Object.keys(manifest)[0]).toBe('name');
    expect(read('my-app', 'src', 'app.ts')).toContain("name: 'my-app'");
    expect(read('my-app', 'README.md')).toMatch(/^# my-app\n/);
    expect(out).toContain('Next steps:\n  cd my-app\n  npm install\n  npm run dev\n');
    expect(err).toBe('');
  });

  it('takes the package name from --name, and writes into the current folder with "."', async () => {
    expect(await run(['.', '--name', '@acme/tasks'], io())).toBe(0);
    expect(JSON.parse(read('package.json')).name).toBe('@acme/tasks');
    expect(out).toContain('Next steps:\n  npm install\n');
  });

  it('names the commands of the package manager that runs it', async () => {
    expect(await run(['my app', '--name', 'my-app'], io({ userAgent: 'pnpm/9.1.0 npm/? node/v20.12.0' }))).toBe(0);
    expect(out).toContain('  cd "my app"\n  pnpm install\n  pnpm dev\n');
  });

  it('writes into a folder that holds only .git', async () => {
    mkdirSync(path.join(cwd, 'repo', '.git'), { recursive: true });
    expect(await run(['repo'], io())).toBe(0);
    expect(existsSync(path.join(cwd, 'repo', 'package.json'))).toBe(true);
  });
});

describe('refusals', () => {
  it('refuses a bad --name with the reasons, and writes nothing', async () => {
    expect(await run(['app', '--name', 'My App'], io())).toBe(1);
    expect(err).toBe(
      'create-mcp-task-server: "My App" is not a valid npm package name: it has capital letters; it contains spaces; pass another with --name\n',
    );
    expect(existsSync(path.join(cwd, 'app'))).toBe(false);
  });

  it('refuses a directory name that is no package name, suggesting one', async () => {
    expect(await run(['My Tasks'], io())).toBe(1);
    expect(err).toContain('"My Tasks" is not a valid npm package name');
    expect(err).toContain('such as --name my-tasks');
    expect(existsSync(path.join(cwd, 'My Tasks'))).toBe(false);
  });

  it('refuses a non-empty folder, leaving it untouched', async () => {
    mkdirSync(path.join(cwd, 'busy'));
    writeFileSync(path.join(cwd, 'busy', 'notes.txt'), 'keep me');
    expect(await run(['busy'], io())).toBe(1);
    expect(err).toBe(
      'create-mcp-task-server: busy is not empty; choose another directory, or pass --force to delete what is in it (except .git)\n',
    );
    expect(read('busy', 'notes.txt')).toBe('keep me');
    expect(existsSync(path.join(cwd, 'busy', 'package.json'))).toBe(false);
  });

  it('with --force, empties the folder (keeping .git) and writes the project', async () => {
    mkdirSync(path.join(cwd, 'busy', '.git'), { recursive: true });
    writeFileSync(path.join(cwd, 'busy', 'notes.txt'), 'old');
    writeFileSync(path.join(cwd, 'busy', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    expect(await run(['busy', '--force'], io())).toBe(0);
    expect(existsSync(path.join(cwd, 'busy', 'notes.txt'))).toBe(false);
    expect(read('busy', '.git', 'HEAD')).toBe('ref: refs/heads/main\n');
    expect(existsSync(path.join(cwd, 'busy', 'package.json'))).toBe(true);
  });

  it('refuses a target that is a file', async () => {
    writeFileSync(path.join(cwd, 'taken'), '');
    expect(await run(['taken'], io())).toBe(1);
    expect(err).toBe('create-mcp-task-server: taken exists and is not a directory\n');
  });

  it('refuses an unknown template, listing the ones there are', async () => {
    expect(await run(['app', '--template', 'react'], io())).toBe(1);
    expect(err).toBe('create-mcp-task-server: there is no template "react"; choose one of: default, minimal, stdio\n');
    expect(existsSync(path.join(cwd, 'app'))).toBe(false);
  });

  it('answers bad usage with exit code 2 and the usage', async () => {
    expect(await run(['app', '--bogus'], io())).toBe(2);
    expect(err).toMatch(/^create-mcp-task-server: Unknown option '--bogus'.*\n\nUsage: create-mcp-task-server/s);
    expect(await run(['a', 'b'], io())).toBe(2);
    expect(await run(['--name'], io())).toBe(2);
  });
});

describe('in a terminal', () => {
  it('asks for the directory, then for a valid package name until it gets one', async () => {
    const prompter = scripted(['Big Project', 'Still Bad', '', 'minimal']);
    expect(await run([], io({ prompter }))).toBe(0);
    expect(prompter.asked[0]).toBe('Project directory:');
    expect(prompter.asked[1]).toContain('"Big Project" is not a valid npm package name');
    expect(prompter.asked[2]).toContain('"Still Bad" is not a valid npm package name');
    expect(prompter.asked[3]).toBe('Template:');
    // The empty answer takes the suggestion.
    expect(JSON.parse(read('Big Project', 'package.json')).name).toBe('still-bad');
    expect(out).toContain('(template "minimal"');
  });

  it('asks before emptying a non-empty folder, and leaves it alone on "no"', async () => {
    mkdirSync(path.join(cwd, 'busy'));
    writeFileSync(path.join(cwd, 'busy', 'notes.txt'), 'keep me');
    const prompter = scripted([false]);
    expect(await run(['busy', '--template', 'default'], io({ prompter }))).toBe(1);
    expect(prompter.asked).toEqual(['busy is not empty. Delete everything in it (except .git) and continue?']);
    expect(err).toBe('create-mcp-task-server: left busy as it was; nothing was written\n');
    expect(read('busy', 'notes.txt')).toBe('keep me');

    expect(await run(['busy', '--template', 'default'], io({ prompter: scripted([true]) }))).toBe(0);
    expect(existsSync(path.join(cwd, 'busy', 'notes.txt'))).toBe(false);
  });
  it('stops without writing when the questions are cancelled (Ctrl-C, Ctrl-D)', async () => {
    const prompter: Prompter = {
      ...scripted([]),
      text: async () => {
        throw new PromptCancelled('cancelled');
      },
    };
    expect(await run([], io({ prompter }))).toBe(1);
    expect(err).toBe('\ncreate-mcp-task-server: cancelled; nothing was written\n');
    expect(existsSync(path.join(cwd, 'my-task-server'))).toBe(false);
  });
});

describe('package names', () => {
  it.each([
    ['my-app', []],
    ['@scope/my.app_2~x', []],
    ['', ['it is empty']],
    ['MyApp', ['it has capital letters']],
    ['.hidden', ['".hidden" starts with "."']],
    ['_private', ['"_private" starts with "_"']],
    ['a/b', ['it contains "/"']],
    ['@scope', ['a scoped name must look like @scope/name']],
    ['node_modules', ['"node_modules" is a reserved name']],
    ['x'.repeat(215), ['it is longer than 214 characters']],
  ])('%j: %j', (name, problems) => {
    expect(packageNameProblems(name)).toEqual(problems);
  });

  it('suggests a valid name for any directory name', () => {
    expect(toValidPackageName('My Cool App!')).toBe('my-cool-app');
    expect(toValidPackageName('.dotted')).toBe('dotted');
    expect(toValidPackageName('???')).toBe('my-task-server');
    for (const name of ['My Cool App!', '.dotted', '???', '__x__']) {
      expect(packageNameProblems(toValidPackageName(name))).toEqual([]);
    }
  });
});

describe('package managers', () => {
  it('reads npm_config_user_agent, defaulting to npm', () => {
    expect(detectPackageManager('yarn/4.1.0 npm/? node/v20.12.0 linux x64')).toBe('yarn');
    expect(detectPackageManager('bun/1.1.0 npm/? node/v20.12.0')).toBe('bun');
    expect(detectPackageManager(undefined)).toBe('npm');
    expect(detectPackageManager('cnpm/9.0.0')).toBe('npm');
  });

  it('words the next steps the way each one spells them', () => {
    expect(nextSteps('yarn', 'app')).toEqual(['cd app', 'yarn', 'yarn dev']);
    expect(nextSteps('bun', 'app')).toEqual(['cd app', 'bun install', 'bun run dev']);
    expect(nextSteps('npm', '../x y')).toEqual(['cd "../x y"', 'npm install', 'npm run dev']);
  });
});

describe('the templates', () => {
  const root = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const names = readdirSync(templatesRoot).filter((name) => name.startsWith('template-'));
  const manifests = names.map((name) => ({
    name,
    manifest: JSON.parse(readFileSync(path.join(templatesRoot, name, 'package.json'), 'utf8')),
  }));

  it('are default, minimal and stdio', () => {
    expect(names.sort()).toEqual(['template-default', 'template-minimal', 'template-stdio']);
  });

  it('depend on this version of mcp-task-server, and on the zod it generates code for', () => {
    for (const { name, manifest } of manifests) {
      expect(manifest.dependencies['mcp-task-server'], name).toBe(`^${root.version}`);
      expect(manifest.dependencies.zod, name).toBe(`^${root.dependencies.zod}`);
    }
  });

  it('use the tool versions this repository is tested with', () => {
    for (const { name, manifest } of manifests) {
      for (const [tool, range] of Object.entries(manifest.devDependencies as Record<string, string>)) {
        expect(range, `${name}: ${tool}`).toBe(`^${root.devDependencies[tool]}`);
      }
    }
  });

  it('have the scripts the next steps and the docs name, and start node itself', () => {
    for (const { name, manifest } of manifests) {
      for (const script of ['dev', 'build', 'start', 'test'])
        expect(manifest.scripts[script], `${name}: ${script}`).toBeTruthy();
      // exec: npm's shell hands its process to node, so SIGTERM to `npm start` reaches the server.
      // An HTTP server bounds V8's young generation (docs/guide/deploying.md, "Memory").
      const flags = name.includes('stdio') ? '' : '--max-semi-space-size=4 ';
      expect(manifest.scripts.start, name).toBe(`exec node ${flags}dist/server.js`);
    }
  });

  it('ship with the scaffolder at the same version', () => {
    const scaffolder = JSON.parse(readFileSync(path.join(repoRoot, 'cli/create-mcp-task-server/package.json'), 'utf8'));
    expect(scaffolder.version).toBe(root.version);
  });
});
