/**
 * `npm start`, the README's quick start, hands signals to the server: npm forwards SIGTERM to
 * the script's shell, and the script `exec`s node, so the signal lands in the server, which
 * closes and exits instead of living on without a parent.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { expect, it } from 'vitest';
import { cleanEnvironment } from '../scaffold/commands.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

it('stops the server on SIGTERM to npm start', async () => {
  const npm = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: cleanEnvironment({ PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, so that whatever the test finds, nothing outlives it (see finally).
    detached: true,
  });
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /MCP task server listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    npm.once('exit', () => reject(new Error(`npm start exited before listening:\n${output}`)));
  });
  try {
    const url = await listening;
    npm.kill('SIGTERM');
    await once(npm, 'exit');

    // The server itself got the signal (it says so), and nothing answers on its port any more.
    await expect.poll(() => output, { timeout: 10_000 }).toContain('SIGTERM received, shutting down');
    await expect
      .poll(
        () =>
          fetch(url, { method: 'POST' }).then(
            () => 'answering',
            () => 'gone',
          ),
        { timeout: 10_000, interval: 200 },
      )
      .toBe('gone');
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // Already gone, as it should be.
    }
  }
}, 60_000);
