/**
 * `npm start`, the README's quick start, hands signals to the server: npm forwards SIGTERM to
 * the script's shell, and the script `exec`s node, so the signal lands in the server, which
 * closes and exits instead of living on without a parent.
 */
import path from 'node:path';
import { it } from 'vitest';
import { expectNpmStartToStopOnSigterm } from '../scaffold/commands.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

it('stops the server on SIGTERM to npm start', async () => {
  await expectNpmStartToStopOnSigterm(repoRoot, { PORT: '0', MCP_TASK_LOG_LEVEL: 'warn' });
}, 60_000);
