#!/usr/bin/env node
/**
 * `npm run create-app -- <directory> [scaffolder options]`: scaffolds an app from this clone,
 * before (or without) anything being published. It packs both packages the way `npm publish`
 * would, runs the packed scaffolder (what `npx create-mcp-task-server` runs), puts the packed
 * framework in the app's `vendor/` folder and points the app's `mcp-task-server` dependency at
 * it, then prints the next steps. The options are the scaffolder's (`--template`, `--name`,
 * `--force`); the directory is relative to where you ran npm.
 *
 * `MCP_TASK_SERVER_TARBALLS=<folder>` packs into that folder and keeps the tarballs, or uses
 * the ones already there: the test suite scaffolds several apps from one pack.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `Usage: npm run create-app -- <directory> [--template <name>] [--name <package name>] [--force]

Packs mcp-task-server and create-mcp-task-server from this clone and scaffolds an app in
<directory> whose mcp-task-server dependency is the packed tarball (in its vendor/ folder).
Templates: default, minimal, stdio (see templates/).
`;

const repoRoot = path.resolve(import.meta.dirname, '..');
// npm runs scripts in the package root; INIT_CWD is where the user typed the command.
const userCwd = process.env.INIT_CWD ?? process.cwd();
const scaffolderArgs = process.argv.slice(2);

const directory = targetDirectory(scaffolderArgs);
if (directory === undefined) {
  process.stderr.write(USAGE);
  process.exit(2);
}

const { version } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
const keptTarballs = process.env.MCP_TASK_SERVER_TARBALLS;
const tarballs = keptTarballs ? path.resolve(userCwd, keptTarballs) : mkdtempSync(path.join(tmpdir(), 'create-app-'));
mkdirSync(tarballs, { recursive: true });
const framework = path.join(tarballs, `mcp-task-server-${version}.tgz`);
const scaffolder = path.join(tarballs, `create-mcp-task-server-${version}.tgz`);

try {
  if (!existsSync(framework)) pack('mcp-task-server', ['pack', '--pack-destination', tarballs]);
  if (!existsSync(scaffolder)) {
    pack('create-mcp-task-server', ['pack', '--workspace', 'create-mcp-task-server', '--pack-destination', tarballs]);
  }

  // The packed scaffolder, run as npx would run it: from its unpacked tarball (it has no dependencies).
  const unpacked = mkdtempSync(path.join(tmpdir(), 'create-mcp-task-server-'));
  try {
    run('tar', ['-xzf', scaffolder, '-C', unpacked], { cwd: repoRoot });
    const created = spawnSync(
      process.execPath,
      [path.join(unpacked, 'package', 'dist', 'index.js'), ...scaffolderArgs],
      {
        cwd: userCwd,
        stdio: 'inherit',
      },
    );
    if (created.status !== 0) process.exit(created.status ?? 1);
  } finally {
    rmSync(unpacked, { recursive: true, force: true });
  }

  const app = path.resolve(userCwd, directory);
  const vendored = `vendor/${path.basename(framework)}`;
  mkdirSync(path.join(app, 'vendor'), { recursive: true });
  copyFileSync(framework, path.join(app, vendored));
  const manifestPath = path.join(app, 'package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const published = manifest.dependencies['mcp-task-server'];
  manifest.dependencies['mcp-task-server'] = `file:${vendored}`;
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);

  process.stdout.write(
    `\nmcp-task-server ${version} comes from ${vendored}, packed from this clone${commitNote()}.\n` +
      `Once it is published: npm install mcp-task-server@${published} && rm -r vendor\n`,
  );
} finally {
  if (!keptTarballs) rmSync(tarballs, { recursive: true, force: true });
}

/** The directory argument, read with the scaffolder's own options; undefined when missing or unreadable. */
function targetDirectory(args) {
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        template: { type: 'string', short: 't' },
        name: { type: 'string', short: 'n' },
        force: { type: 'boolean', short: 'f' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    return values.help || positionals.length !== 1 ? undefined : positionals[0];
  } catch (error) {
    process.stderr.write(`create-app: ${error.message}\n\n`);
    return undefined;
  }
}

/** `npm pack` (its prepack builds the package); its chatter is shown only when it fails. */
function pack(name, args) {
  process.stderr.write(`packing ${name}...\n`);
  run('npm', [...args, '--silent'], { cwd: repoRoot });
}

function run(command, args, options) {
  const result = spawnSync(command, args, {
    ...options,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm is npm.cmd on Windows, which only a shell runs.
    shell: process.platform === 'win32' && command === 'npm',
  });
  if (result.status !== 0) {
    process.stderr.write(
      `${command} ${args.join(' ')} failed:\n${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}\n`,
    );
    process.exit(1);
  }
}

function commitNote() {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  return head.status === 0 ? ` at ${head.stdout.trim()}` : '';
}
