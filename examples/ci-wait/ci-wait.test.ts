/**
 * The ci-wait example end to end over HTTP: the task starts a job on the stub CI, hands it the
 * callback URL, the stub POSTs its conclusion there, the task waits a little and polls the CI
 * once more. One server on the in-process runtime, a real socket, the framework's task client.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTaskCli } from '../../cli/task/program.js';
import { connectTaskClient, type TaskClient } from '../../src/client/index.js';
import { createTaskServer, type TaskServer } from '../../src/index.js';
import { silentLogger } from '../../src/observe/logger.js';
import { ciWaitApp } from './app.js';
import { type StubCi, startStubCi } from './src/stub-ci.js';

/** A free loopback port: the server's public URL must be known before it listens. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('ci-wait example', () => {
  let ci: StubCi;
  let server: TaskServer;
  let client: TaskClient;
  let url: string;

  beforeAll(async () => {
    ci = await startStubCi({ durationMs: 300, artifactDelayMs: 50 });
    const port = await freePort();
    server = createTaskServer({ ...ciWaitApp(ci.url), logger: silentLogger, publicUrl: `http://127.0.0.1:${port}` });
    const listening = await server.listen({ port, host: '127.0.0.1' });
    url = listening.url;
    client = await connectTaskClient(listening.url, { defaultPollIntervalMs: 50 });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await ci?.close();
  });

  it('waits for the CI to call back, then polls once more and reports the artifacts', async () => {
    const call = await client.call('run_pipeline', { ref: 'main' });
    const result = await call.result();
    expect(result.structuredContent).toEqual({
      jobId: 'job-1',
      conclusion: 'success',
      failedTests: 0,
      artifacts: ['job-1/report.xml'],
    });
    const job = ci.jobs.get('job-1');
    // The stub reached the callback URL the task handed it, and the server took its payload.
    expect(job?.notify).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callbacks\/[A-Za-z0-9_-]{32}$/);
    expect(job?.callbackStatus).toBe(200);
  });

  it('shows the wait in `mcp-task watch`', async () => {
    const call = await client.call('run_pipeline', { ref: 'main' });
    let stdout = '';
    let stderr = '';
    const code = await runTaskCli(['watch', url, call.taskId as string], {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
    });
    expect(code).toBe(0);
    // Status lines go to stderr, the result to stdout.
    expect(stderr).toContain('waiting for callback ci');
    expect(JSON.parse(stdout)).toMatchObject({ conclusion: 'success' });
  });

  it('reports a failed pipeline with its failed tests', async () => {
    const call = await client.call('run_pipeline', { ref: 'fail-fast' });
    expect((await call.result()).structuredContent).toMatchObject({ conclusion: 'failure', failedTests: 3 });
  });

  it('says "waiting for callback ci" while it waits, and times out when the CI never calls', async () => {
    const slow = await startStubCi({ durationMs: 60_000 });
    const port = await freePort();
    const other = createTaskServer({
      ...ciWaitApp(slow.url),
      logger: silentLogger,
      publicUrl: `http://127.0.0.1:${port}`,
    });
    const listening = await other.listen({ port, host: '127.0.0.1' });
    const slowClient = await connectTaskClient(listening.url, { defaultPollIntervalMs: 50 });
    try {
      const call = await slowClient.call('run_pipeline', { ref: 'main', timeoutMs: 600 });
      const messages: string[] = [];
      for await (const event of call.events) {
        if (event.type === 'status' && event.task.statusMessage) messages.push(event.task.statusMessage);
      }
      expect(messages).toContain('waiting for callback ci');
      expect((await call.result()).structuredContent).toEqual({
        jobId: 'job-1',
        conclusion: 'timed_out',
        artifacts: [],
      });
    } finally {
      await slowClient.close();
      await other.close();
      await slow.close();
    }
  });
});
