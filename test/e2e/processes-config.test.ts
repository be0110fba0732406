/**
 * Server and worker processes as an operator starts them: configuration read once and checked
 * (a bad value ends the process with one line naming the variable), and a clean stop on
 * SIGTERM and SIGINT for `runTaskServer` and for a worker started by `runTaskWorkers`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../src/host/config.js';
import { limitRepeats } from '../../src/observe/repeat-limiter.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { startAppProcess } from './processes.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Runs an example entry until it exits on its own; what it said and how it ended. */
function runUntilExit(
  entry: 'server' | 'worker',
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=mcp-task-server-source', '--import', 'tsx', `examples/conformance-fixture/${entry}.ts`],
    {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', REDIS_URL: '', WORKERS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    }),
  );
}

describe('configuration is read once and checked', () => {
  it('names the variable, the value and what it accepts', () => {
    expect(() => readConfig({ WORKERS: 'eight' })).toThrow(
      new ConfigError('WORKERS', 'eight', 'a whole number of 0 or more (0: this server runs no tasks)'),
    );
    expect(() => readConfig({ PORT: '70000' })).toThrow(/^PORT="70000" is not valid: PORT must be a whole number/);
    expect(() => readConfig({ PORT: '3000.5' })).toThrow(/PORT/);
    expect(() => readConfig({ REDIS_URL: 'localhost:6379' })).toThrow(/^REDIS_URL="localhost:6379" is not valid/);
    expect(() => readConfig({ WORKER_LOCK_MS: '10' })).toThrow(/WORKER_LOCK_MS/);
    expect(() => readConfig({ MCP_TASK_VERSION_WAIT_MS: '0' })).toThrow(
      /^MCP_TASK_VERSION_WAIT_MS="0" is not valid: MCP_TASK_VERSION_WAIT_MS must be a whole number of milliseconds from 1/,
    );
    expect(() => readConfig({ MCP_TASK_LOG_LEVEL: 'loud' })).toThrow(/MCP_TASK_LOG_LEVEL/);
  });

  it('takes good values, and any host:port in REDIS_URL', () => {
    const config = readConfig({
      REDIS_URL: 'redis://10.1.2.3:7001',
      REDIS_PREFIX: 'app',
      WORKERS: '0',
      PORT: '8080',
      WORKER_LOCK_MS: '5000',
      WORKER_STALLED_INTERVAL_MS: '2000',
      MCP_TASK_VERSION_WAIT_MS: '120000',
    });
    expect(config).toMatchObject({
      redis: {
        connection: 'redis://10.1.2.3:7001',
        prefix: 'app',
        worker: { lockDurationMs: 5000, stalledIntervalMs: 2000, versionWaitMs: 120_000 },
      },
      workers: 0,
      port: 8080,
    });
    expect(readConfig({})).toEqual({ workerTimings: {} });
  });

  it('ends a worker process given WORKERS=0 with one line naming WORKERS (not a BullMQ stack trace)', async () => {
    const { code, stderr } = await runUntilExit('worker', { REDIS_URL, WORKERS: '0' });
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: WORKERS="0" is not valid/)]);
  }, 30_000);

  it('ends a server given a non-numeric PORT or WORKERS with one line naming it', async () => {
    const port = await runUntilExit('server', { PORT: 'eighty' });
    expect(port.code).toBe(2);
    expect(port.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: PORT="eighty" is not valid/)]);
    const workers = await runUntilExit('server', { WORKERS: '-1' });
    expect(workers.code).toBe(2);
    expect(workers.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: WORKERS="-1" is not valid/)]);
  }, 60_000);

  it('writes a repeated identical error once per window, then says how many were held back', () => {
    const lines: unknown[] = [];
    let now = 0;
    const log = limitRepeats(
      {
        debug() {},
        info() {},
        warn: (message, data) => lines.push([message, data]),
        error() {},
      },
      30_000,
      () => now,
    );
    for (let second = 0; second < 60; second++) {
      now = second * 1000;
      log.warn('Task worker error', { error: 'Connection is closed.' });
      log.warn('Task worker error', { error: 'Connection is closed.' });
    }
    log.warn('Another problem');
    expect(lines).toEqual([
      ['Task worker error', { error: 'Connection is closed.' }],
      ['Task worker error', { error: 'Connection is closed.', repeatedSinceLastLog: 59 }],
      ['Another problem', undefined],
    ]);
  });
});

describe('runTaskServer stops cleanly on a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`exits 0 on ${signal}, saying so`, async () => {
      const server = await startAppProcess('conformance-fixture', 'server', { REDIS_URL: '', WORKERS: '' });
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill(signal);
      expect(await exited).toBe(0);
      expect(server.output()).toContain(`${signal} received, shutting down`);
    }, 30_000);
  }
});

describeWithRedis('a worker started by runTaskWorkers stops cleanly on a signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`exits 0 on ${signal}`, async () => {
      const prefix = randomPrefix();
      try {
        const worker = await startAppProcess('conformance-fixture', 'worker', {
          REDIS_URL,
          REDIS_PREFIX: prefix,
          WORKERS: '2',
          MCP_TASK_LOG_LEVEL: 'info',
        });
        const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
        worker.child.kill(signal);
        expect(await exited).toBe(0);
        expect(worker.output()).toContain(`${signal} received, stopping workers`);
      } finally {
        await deleteKeysUnder(prefix);
      }
    }, 30_000);
  }
});
