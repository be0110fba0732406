/**
 * `/healthz`, `/readyz` and `/metrics` on both runtimes, and a task followed through the JSON
 * log lines of a server process and a worker process (BullMQ), whose health port answers too; and
 * the policies' counters and waiting gauge on both runtimes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/host/config.js';
import { createTaskServer } from '../../src/host/task-server.js';
import { silentLogger } from '../../src/observe/logger.js';
import { deleteKeysUnder, describeWithRedis, REDIS_URL, randomPrefix } from '../bullmq/support.js';
import { type AppProcess, startAppProcess } from '../e2e/processes.js';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { OpsTools, opsManifest, PolicyTools, policyManifest, tokenAuth } from './ops-app.js';

const origin = (url: string) => new URL(url).origin;

async function getJson(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function metricsText(url: string, token?: string): Promise<string> {
  const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health routes on the in-process runtime', () => {
  let running: RunningServer;

  beforeAll(async () => {
    running = await startServer({ manifest: opsManifest, instances: [new OpsTools()], metrics: false });
  });
  afterAll(() => running?.close());

  it('/healthz answers at once, without credentials, with a tiny JSON body', async () => {
    const { status, body } = await getJson(`${origin(running.url)}/healthz`);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok' });
  });

  it('/readyz lists its checks', async () => {
    const { status, body } = await getJson(`${origin(running.url)}/readyz`);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ready', checks: { runtime: 'ok', manifest: 'ok', shutdown: 'ok' } });
  });

  it('refuses other methods, and keeps /metrics off unless asked', async () => {
    expect((await fetch(`${origin(running.url)}/healthz`, { method: 'POST' })).status).toBe(405);
    const metrics = await getJson(`${origin(running.url)}/metrics`);
    expect(metrics.status).toBe(404);
    expect(String(metrics.body.error)).toContain('MCP_TASK_METRICS=1');
  });

  it('/readyz says so once the server is shutting down', async () => {
    const server = createTaskServer({ manifest: opsManifest, instances: [new OpsTools()], logger: silentLogger });
    await server.close();
    const response = await server.fetch(new Request('http://127.0.0.1/readyz'));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 'not ready', checks: { shutdown: 'failing' } });
  });
});

describe('metrics on the in-process runtime', () => {
  let running: RunningServer;
  let client: Client;

  beforeAll(async () => {
    running = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      metrics: { token: 'scrape-token' },
    });
    client = await connectV1(running.url);
  });
  afterAll(async () => {
    await client?.close();
    await running?.close();
  });

  it('need their bearer token when one is set', async () => {
    const url = `${origin(running.url)}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong-token!' } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer scrape-token' } })).status).toBe(200);
  });

  it('count tasks, their durations, requests by method and JSON-RPC code, sessions and tasks by status', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'crawl', arguments: { pages: 1, pauseMs: 0 }, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    const failing = await client.request(
      { method: 'tools/call', params: { name: 'explode', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(failing.task.taskId, CallToolResultSchema);
    const long = await client.request(
      { method: 'tools/call', params: { name: 'crawl', arguments: { pages: 100, pauseMs: 1000 }, task: {} } },
      CreateTaskResultSchema,
    );
    await expect(client.experimental.tasks.getTask('no-such-task')).rejects.toThrow();

    const url = `${origin(running.url)}/metrics`;
    const text = await pollUntil(
      () => metricsText(url, 'scrape-token'),
      (body) => sample(body, 'mcp_task_failed_total{tool="explode",kind="tool_error"}') === 1,
    );
    expect(sample(text, 'mcp_task_created_total{tool="crawl"}')).toBe(2);
    expect(sample(text, 'mcp_task_completed_total{tool="crawl"}')).toBe(1);
    expect(sample(text, 'mcp_task_duration_seconds_count{tool="crawl",outcome="completed"}')).toBe(1);
    expect(sample(text, 'mcp_task_queue_wait_seconds_count{tool="crawl"}')).toBe(2);
    expect(sample(text, 'mcp_task_tasks{status="working"}')).toBe(1);
    expect(sample(text, 'mcp_task_rpc_requests_total{method="tools/call",code="ok"}')).toBe(3);
    expect(sample(text, 'mcp_task_rpc_requests_total{method="tasks/get",code="-32602"}')).toBe(1);
    expect(sample(text, 'mcp_task_http_requests_total{method="POST",status="200"}')).toBeGreaterThan(3);
    expect(sample(text, 'mcp_task_sessions')).toBe(1);
    expect(text).toContain('# TYPE mcp_task_streams gauge');
    expect(text).toContain('# TYPE mcp_task_refusals_total counter');
    expect(text).toContain('process_cpu_seconds_total');

    await client.experimental.tasks.cancelTask(long.task.taskId);
    const after = await metricsText(url, 'scrape-token');
    expect(sample(after, 'mcp_task_cancelled_total{tool="crawl"}')).toBe(1);
  });

  it('show what waits on tasks right now, as TaskServer.stats() counts it', async () => {
    const url = `${origin(running.url)}/metrics`;
    const long = await client.request(
      { method: 'tools/call', params: { name: 'crawl', arguments: { pages: 100, pauseMs: 1000 }, task: {} } },
      CreateTaskResultSchema,
    );
    const waiting = client.experimental.tasks.getTaskResult(long.task.taskId, CallToolResultSchema).catch(() => {});
    const during = await pollUntil(
      () => metricsText(url, 'scrape-token'),
      (body) => sample(body, 'mcp_task_waiters{kind="result"}') === 1,
    );
    const stats = running.server.stats();
    expect(sample(during, 'mcp_task_waiters{kind="stream"}')).toBe(stats.waiters.total.stream);
    expect(sample(during, 'mcp_task_engine_waits')).toBe(1);
    expect(sample(during, 'mcp_task_followers')).toBe(stats.engine.followers);
    expect(sample(during, 'mcp_task_followed_tasks')).toBe(stats.engine.followedTasks);
    expect(stats.engine.followedTasks).toBeGreaterThanOrEqual(1);
    await client.experimental.tasks.cancelTask(long.task.taskId);
    await waiting;
    const after = await pollUntil(
      () => metricsText(url, 'scrape-token'),
      (body) => sample(body, 'mcp_task_waiters{kind="result"}') === 0,
    );
    expect(sample(after, 'mcp_task_engine_waits')).toBe(0);
  });
});

describeWithRedis('health routes and metrics on BullMQ', () => {
  const prefix = randomPrefix();
  let running: RunningServer;

  beforeAll(async () => {
    running = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      redis: { connection: REDIS_URL, prefix },
      metrics: true,
    });
  });
  afterAll(async () => {
    await running?.close();
    await deleteKeysUnder(prefix);
  });

  it('/readyz checks Redis, and the queue depth is a metric', async () => {
    const { status, body } = await getJson(`${origin(running.url)}/readyz`);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ready', checks: { runtime: 'ok', manifest: 'ok', shutdown: 'ok' } });
    const text = await metricsText(`${origin(running.url)}/metrics`);
    expect(sample(text, 'mcp_task_queue_jobs{state="waiting"}')).toBe(0);
    expect(sample(text, 'mcp_task_queue_jobs{state="active"}')).toBe(0);
    expect(sample(text, 'mcp_task_queue_jobs{state="delayed"}')).toBe(0);
  });

  it('/readyz answers 503 naming the failed check when Redis is unreachable, while /healthz stays up', async () => {
    const logged: { message: string; data?: Record<string, unknown> }[] = [];
    const capture = (message: string, data?: Record<string, unknown>) =>
      logged.push({ message, ...(data && { data }) });
    const unreachable = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      redis: { connection: 'redis://127.0.0.1:1', prefix: randomPrefix() },
      workers: 0,
      metrics: { token: 'scrape-token-0123' },
      logger: { debug() {}, info: capture, warn: capture, error: capture },
    });
    try {
      const readyz = `${origin(unreachable.url)}/readyz`;
      // Without credentials: which check fails, never why (the reason names the Redis address).
      const anonymous = await fetch(readyz);
      const text = await anonymous.text();
      expect(anonymous.status).toBe(503);
      expect(JSON.parse(text)).toEqual({
        status: 'not ready',
        checks: { runtime: 'failing', manifest: 'ok', shutdown: 'ok' },
      });
      expect(text).not.toContain('127.0.0.1');
      // The metrics token shows the reason; a wrong token does not.
      const wrong = await getJson(readyz, { headers: { authorization: 'Bearer wrong-token-0123' } });
      expect((wrong.body.checks as Record<string, string>).runtime).toBe('failing');
      const { status, body } = await getJson(readyz, { headers: { authorization: 'Bearer scrape-token-0123' } });
      expect(status).toBe(503);
      expect(body.checks).toMatchObject({ manifest: 'ok', shutdown: 'ok' });
      expect((body.checks as Record<string, string>).runtime).toMatch(/Redis|no answer within/);
      // The log has the reason, once however often the probe asks.
      const failing = logged.filter((line) => line.message === 'readiness check failing');
      expect(failing.length).toBeGreaterThanOrEqual(1);
      expect(failing[0]?.data).toMatchObject({ check: 'runtime', reason: expect.stringMatching(/Redis|no answer/) });
      expect(failing.length).toBeLessThan(3);
      expect((await getJson(`${origin(unreachable.url)}/healthz`)).status).toBe(200);
    } finally {
      await unreachable.close();
    }
  });
});

/** A stand-in OTLP/HTTP collector: keeps (service, trace id, span name) of every span posted as JSON. */
async function startCollector() {
  const spans: { service: string; traceId: string; name: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      try {
        const parsed = JSON.parse(body) as { resourceSpans?: OtlpResourceSpans[] };
        for (const resourceSpans of parsed.resourceSpans ?? []) {
          const service = resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name');
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({ service: service?.value?.stringValue ?? '', traceId: span.traceId, name: span.name });
            }
          }
        }
      } catch {
        // Not JSON: the test sees no spans and says so.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    spans,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface OtlpResourceSpans {
  resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
  scopeSpans?: { spans?: { traceId: string; name: string }[] }[];
}

describeWithRedis('a task in the logs and traces of a server process and a worker process', () => {
  const prefix = randomPrefix();
  const healthPort = 20_000 + Math.floor(Math.random() * 30_000);
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let server: AppProcess;
  let worker: AppProcess;
  let client: Client;

  beforeAll(async () => {
    collector = await startCollector();
    const env = {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      MCP_TASK_LOG_LEVEL: 'info',
      MCP_TASK_METRICS: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    [server, worker] = await Promise.all([
      startAppProcess('conformance-fixture', 'server', { ...env, WORKERS: '0' }),
      startAppProcess('conformance-fixture', 'worker', { ...env, WORKERS: '2', HEALTH_PORT: String(healthPort) }),
    ]);
    client = await connectV1(server.url as string);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await Promise.allSettled([server?.stop(), worker?.stop()]);
    await collector?.close();
    await deleteKeysUnder(prefix);
  });

  const linesOf = (process: AppProcess, taskId: string) =>
    process
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.taskId === taskId);

  it('server lines say created, worker lines say started, completed and failed with its stack', async () => {
    const done = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'x' }, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(done.task.taskId, CallToolResultSchema);
    const failed = await client.request(
      { method: 'tools/call', params: { name: 'failing_job', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(failed.task.taskId, CallToolResultSchema);

    const doneId = done.task.taskId;
    await pollUntil(
      async () => linesOf(worker, doneId).map((line) => line.event),
      (events) => events.includes('completed'),
    );
    expect(linesOf(server, doneId).map((line) => line.event)).toEqual(['created', 'result_read']);
    expect(linesOf(server, doneId)[0]).toMatchObject({
      msg: 'task created',
      role: 'server',
      tool: 'slow_compute',
      principal: null,
      jobId: doneId,
      level: 30,
    });
    expect(linesOf(worker, doneId).map((line) => line.event)).toEqual(['started', 'completed']);
    expect(linesOf(worker, doneId)[0]).toMatchObject({ role: 'worker', jobId: doneId, tool: 'slow_compute' });
    expect(String(linesOf(worker, doneId)[0]?.msg)).toMatch(/^task started on /);
    expect(linesOf(worker, doneId)[1]?.durationMs).toBeTypeOf('number');

    const failedId = failed.task.taskId;
    const failure = await pollUntil(
      async () => linesOf(worker, failedId).find((line) => line.event === 'failed'),
      (line) => line !== undefined,
    );
    expect(failure).toMatchObject({ level: 50, msg: 'task failed', error: 'The job failed on purpose' });
    expect((failure?.err as { stack?: string } | undefined)?.stack).toContain('fixture-tools.ts');
  });

  it('export over OTLP one trace per task, from both processes under their service names', async () => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 't' }, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    const run = await pollUntil(
      async () =>
        collector.spans.find(
          (span) => span.service === 'conformance-fixture-worker' && span.name === 'task slow_compute',
        ),
      (span) => span !== undefined,
    );
    const sameTrace = collector.spans.filter((span) => span.traceId === run?.traceId);
    expect(sameTrace).toContainEqual({
      service: 'conformance-fixture-server',
      traceId: run?.traceId,
      name: 'tools/call',
    });
  });

  it('the worker answers on its health port, with its own metrics', async () => {
    const base = `http://127.0.0.1:${healthPort}`;
    expect(await getJson(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await getJson(`${base}/readyz`)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok' } },
    });
    const text = await metricsText(`${base}/metrics`);
    expect(sample(text, 'mcp_task_completed_total{tool="slow_compute"}')).toBe(2);
    expect(sample(text, 'mcp_task_failed_total{tool="failing_job",kind="tool_error"}')).toBe(1);
    const serverText = await metricsText(`${origin(server.url as string)}/metrics`);
    expect(sample(serverText, 'mcp_task_created_total{tool="slow_compute"}')).toBe(2);
    // Its metrics have no token and its port listens on every interface: the worker says so.
    // The server listens on loopback only, and says nothing.
    expect(worker.output()).toContain('/metrics answers without a token on 0.0.0.0');
    expect(server.output()).not.toContain('/metrics answers without a token');
  });
});

describeWithRedis("a worker's health port with a metrics token, on loopback", () => {
  const prefix = randomPrefix();
  const healthPort = 20_000 + Math.floor(Math.random() * 30_000);
  let worker: AppProcess;

  beforeAll(async () => {
    worker = await startAppProcess('conformance-fixture', 'worker', {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      WORKERS: '1',
      HEALTH_PORT: String(healthPort),
      HEALTH_HOST: '127.0.0.1',
      MCP_TASK_METRICS: '1',
      MCP_TASK_METRICS_TOKEN: 'worker-scrape-token',
    });
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await deleteKeysUnder(prefix);
  });

  it('asks for the token on /metrics, as the server does, and listens on HEALTH_HOST only', async () => {
    const base = `http://127.0.0.1:${healthPort}`;
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-scrape-token' } })).status).toBe(
      401,
    );
    await metricsText(`${base}/metrics`, 'worker-scrape-token');
    expect(await getJson(`${base}/readyz`)).toEqual({
      status: 200,
      body: { status: 'ready', checks: { redis: 'ok' } },
    });
    // Another loopback address reaches the machine, but not a port bound to 127.0.0.1.
    await expect(fetch(`http://127.0.0.2:${healthPort}/healthz`)).rejects.toThrow();
    expect(worker.output()).not.toContain('/metrics answers without a token');
  });
});

describe('metrics open to anyone who can reach them', () => {
  it('are warned about when served without a token beyond loopback, and not otherwise', async () => {
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
    const open = (metrics: boolean | { token: string }) =>
      createTaskServer({ manifest: opsManifest, instances: [new OpsTools()], logger, metrics });
    const cases = [
      { metrics: true, host: '0.0.0.0', warned: true },
      { metrics: true, host: '127.0.0.1', warned: false },
      { metrics: { token: 'scrape-token-0123' }, host: '0.0.0.0', warned: false },
      { metrics: false, host: '0.0.0.0', warned: false },
    ];
    for (const { metrics, host, warned } of cases) {
      warnings.length = 0;
      const server = open(metrics);
      await server.listen({ port: 0, host });
      await server.close();
      expect(warnings.some((line) => line.startsWith(`/metrics answers without a token on ${host}`))).toBe(warned);
    }
  });
});

describe('the operator variables', () => {
  it('are checked at start-up, each bad value named, a token never echoed', () => {
    expect(() => readConfig({ HEALTH_PORT: 'ninety' })).toThrow(/^HEALTH_PORT="ninety" is not valid/);
    expect(() => readConfig({ MCP_TASK_METRICS: 'yes' })).toThrow(/^MCP_TASK_METRICS="yes" is not valid/);
    expect(() => readConfig({ MCP_TASK_DASHBOARD: 'on' })).toThrow(/MCP_TASK_DASHBOARD/);
    expect(() => readConfig({ MCP_TASK_LOG_FORMAT: 'xml' })).toThrow(/MCP_TASK_LOG_FORMAT/);
    expect(() => readConfig({ MCP_TASK_METRICS_TOKEN: 'short-secret' })).toThrow(
      /^MCP_TASK_METRICS_TOKEN="\(hidden\)" is not valid/,
    );
    expect(readConfig({ HEALTH_PORT: '9100', HEALTH_HOST: '127.0.0.1', MCP_TASK_METRICS: '1' })).toMatchObject({
      healthPort: 9100,
      healthHost: '127.0.0.1',
    });
  });
});

/** The policies' counters and the waiting gauge, as `/metrics` shows them on one runtime. */
function describePolicyMetrics(name: string, onRedis: boolean): void {
  (onRedis ? describeWithRedis : describe)(`policy metrics on ${name}`, () => {
    const prefix = randomPrefix();
    let running: RunningServer;
    let client: Client;

    beforeAll(async () => {
      running = await startServer({
        manifest: policyManifest,
        instances: [new PolicyTools()],
        metrics: true,
        http: { auth: tokenAuth({ 'token-cy': 'cy' }) },
        limits: { maxRunningTasksPerPrincipal: 1 },
        ...(onRedis && { redis: { connection: REDIS_URL, prefix } }),
      });
      client = await connectV1(running.url, { token: 'token-cy' });
    });
    afterAll(async () => {
      await client?.close();
      await running?.close();
      if (onRedis) await deleteKeysUnder(prefix);
    });

    const create = async (tool: string, args: Record<string, unknown>) =>
      (
        await client.request(
          { method: 'tools/call', params: { name: tool, arguments: args, task: {} } },
          CreateTaskResultSchema,
        )
      ).task.taskId;
    const scrape = () => metricsText(`${origin(running.url)}/metrics`);

    it('count retries, timeouts and idempotent hits per tool', async () => {
      const flaky = await create('flaky', { label: 'm' });
      const lookup = await create('lookup', { term: 'm' });
      expect(await create('lookup', { term: 'm' })).toBe(lookup);
      expect(await create('lookup', { term: 'm' })).toBe(lookup);
      await client.experimental.tasks.getTaskResult(flaky, CallToolResultSchema);
      const text = await pollUntil(scrape, (body) => sample(body, 'mcp_task_completed_total{tool="flaky"}') === 1);
      expect(text).toContain('# TYPE mcp_task_retries_total counter');
      expect(sample(text, 'mcp_task_retries_total{tool="flaky"}')).toBe(2);
      expect(sample(text, 'mcp_task_timeouts_total{tool="flaky"}')).toBe(1);
      expect(sample(text, 'mcp_task_idempotent_hits_total{tool="lookup"}')).toBe(2);
      expect(sample(text, 'mcp_task_idempotent_hits_total{tool="flaky"}')).toBeUndefined();
    }, 20_000);

    it("gauge the tasks waiting for their principal's share while they wait", async () => {
      const series = 'mcp_task_waiting_by_reason{reason="principal_share"}';
      const first = await create('hold', { ms: 1500 });
      const second = await create('hold', { ms: 0 });
      const during = await pollUntil(scrape, (body) => sample(body, series) === 1);
      expect(during).toContain('# TYPE mcp_task_waiting_by_reason gauge');
      await client.experimental.tasks.getTaskResult(second, CallToolResultSchema);
      expect((await client.experimental.tasks.getTask(first)).status).toBe('completed');
      await pollUntil(scrape, (body) => sample(body, series) === 0);
    }, 20_000);
  });
}

describePolicyMetrics('the in-process runtime', false);
describePolicyMetrics('BullMQ', true);
