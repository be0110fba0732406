/**
 * A callback POSTed to a different server process than the one that created (and runs) the
 * task: two real ci-wait server processes on one Redis. Server A takes the call and runs the
 * task; its callback URLs point at server B, which runs no tasks. The stub CI POSTs there; B
 * stores the payload and promotes the parked job through Redis; A's worker replays the method.
 */
import { afterEach, expect, it } from 'vitest';
import { type StubCi, startStubCi } from '../../examples/ci-wait/src/stub-ci.js';
import { connectTaskClient } from '../../src/client/index.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { type AppProcess, startAppProcess } from './processes.js';

describeWithRedis('callbacks across server processes', () => {
  const processes: AppProcess[] = [];
  let ci: StubCi | undefined;
  let prefix = '';

  afterEach(async () => {
    for (const running of processes.splice(0)) await running.stop();
    await ci?.close();
    await deleteKeysUnder(prefix);
  });

  it('takes the POST on the other server, and the parked task resumes on the first', async () => {
    prefix = randomPrefix();
    ci = await startStubCi({ durationMs: 1500, artifactDelayMs: 50 });
    const shared = { REDIS_URL, REDIS_PREFIX: prefix, CI_URL: ci.url, MCP_TASK_LOG_LEVEL: 'info' };
    const receiver = await startAppProcess('ci-wait', 'server', { ...shared, WORKERS: '0' });
    processes.push(receiver);
    const receiverOrigin = new URL(receiver.url as string).origin;
    // A short grace: the run parks (frees its slot) well before the CI calls back.
    const runner = await startAppProcess('ci-wait', 'server', {
      ...shared,
      WORKERS: '2',
      WORKER_INPUT_GRACE_MS: '100',
      MCP_TASK_PUBLIC_URL: receiverOrigin,
    });
    processes.push(runner);

    const client = await connectTaskClient(runner.url as string, { defaultPollIntervalMs: 100 });
    try {
      const call = await client.call('run_pipeline', { ref: 'main', timeoutMs: 60_000 });
      const result = await call.result();
      expect(result.structuredContent).toEqual({
        jobId: 'job-1',
        conclusion: 'success',
        failedTests: 0,
        artifacts: ['job-1/report.xml'],
      });
    } finally {
      await client.close();
    }
    const job = ci.jobs.get('job-1');
    expect(job?.notify.startsWith(`${receiverOrigin}/callbacks/`)).toBe(true);
    expect(job?.callbackStatus).toBe(200);
    // The receiver wrote the audit line; the runner parked, and ran the method again after the POST.
    expect(receiver.output()).toContain('task callback posted');
    expect(runner.output()).toContain('task parked (callback)');
    expect(runner.output()).toMatch(/"resumed":true/);
    // A second POST, to either server, is refused: the hook took its one payload.
    for (const origin of [receiverOrigin, new URL(runner.url as string).origin]) {
      const again = await fetch(job?.notify.replace(receiverOrigin, origin) as string, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jobId: 'job-1', conclusion: 'failure', stats: { tests: 1, failed: 1 } }),
      });
      expect(again.status).toBe(410);
    }
  }, 60_000);
});
