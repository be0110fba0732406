/**
 * A stand-in for a CI service, on node:http, for the example and its tests: `POST /jobs` with
 * `{ ref, notify }` starts a "pipeline" that, after `durationMs`, POSTs its conclusion to the
 * `notify` URL (the task's callback URL), as GitHub Actions or Buildkite call a webhook.
 * `GET /jobs/<id>` answers the job's state, for the one poll the task makes after its sleep.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A job as the stub keeps it. */
export interface StubJob {
  readonly id: string;
  readonly ref: string;
  readonly notify: string;
  state: 'running' | 'passed' | 'failed';
  /** The HTTP status the callback URL answered the stub's POST with. */
  callbackStatus?: number;
  /** Artifacts published some time after the conclusion (the task polls for them). */
  artifacts: string[];
}

export interface StubCi {
  readonly url: string;
  readonly jobs: ReadonlyMap<string, StubJob>;
  close(): Promise<void>;
}

/**
 * Starts the stub on a free loopback port. Refs starting with `fail` fail; the rest pass. The
 * artifact list appears `artifactDelayMs` after the conclusion.
 */
export async function startStubCi(options: { durationMs?: number; artifactDelayMs?: number } = {}): Promise<StubCi> {
  const durationMs = options.durationMs ?? 200;
  const artifactDelayMs = options.artifactDelayMs ?? 50;
  const jobs = new Map<string, StubJob>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/jobs') {
        const { ref, notify } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ref: string; notify: string };
        const job: StubJob = { id: `job-${jobs.size + 1}`, ref, notify, state: 'running', artifacts: [] };
        jobs.set(job.id, job);
        later(durationMs, () => {
          job.state = ref.startsWith('fail') ? 'failed' : 'passed';
          const conclusion = {
            jobId: job.id,
            conclusion: job.state === 'passed' ? 'success' : 'failure',
            stats: { tests: 42, failed: job.state === 'passed' ? 0 : 3 },
          };
          void fetch(job.notify, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(conclusion),
          }).then(
            (response) => {
              job.callbackStatus = response.status;
            },
            () => {
              job.callbackStatus = 0;
            },
          );
          later(artifactDelayMs, () => {
            job.artifacts = [`${job.id}/report.xml`];
          });
        });
        reply(201, { id: job.id });
        return;
      }
      const match = req.method === 'GET' ? /^\/jobs\/([\w-]+)$/.exec(req.url ?? '') : null;
      const job = match ? jobs.get(match[1] as string) : undefined;
      if (job) reply(200, { id: job.id, state: job.state, artifacts: job.artifacts });
      else reply(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    jobs,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
