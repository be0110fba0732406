/**
 * `createTestHarness(app)`: an app's tools served in-process and a client connected to them,
 * for the app's own tests. The server is the real one (`createTaskServer`), reached through its
 * `fetch` without a socket; the runtime is the in-process one with a clock the test moves, or
 * BullMQ on Redis. The client is `mcp-task-server/client`, or the typed client generated for
 * the app when its factory is passed.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Ioredis from 'ioredis';
import {
  type CallOptions,
  connectTaskClient,
  type DialectChoice,
  type TaskCall,
  type TaskClient,
  type TaskStatus,
} from '../client/index.js';
import type { TaskPolicy } from '../engine/policy.js';
import { createTaskServer, type TaskServer } from '../host/task-server.js';
import { silentLogger } from '../observe/logger.js';
import { MemoryTaskRuntime } from '../runtime/memory/memory-runtime.js';
import type { TaskManifest } from '../tools/definition.js';
import { type ScriptedAnswers, scriptedAnswer } from './answers.js';
import { createTestClock, type TestClock } from './clock.js';

/** What an app exports for its server: the generated manifest and the instances. */
export interface TestedApp {
  readonly manifest: TaskManifest;
  readonly instances: readonly object[];
  readonly name?: string;
  readonly version?: string;
}

/**
 * How `createTestHarness` sets the app up: revision, runtime, scripted answers, policy, and the
 * client the tests get.
 */
export interface TestHarnessOptions<Client> {
  /** The task dialect the client speaks: `2026` (default) or `2025`. */
  readonly dialect?: Exclude<DialectChoice, 'auto'>;
  /** `memory` (default), or `bullmq` on Redis (`redisUrl`, else `REDIS_URL`). */
  readonly runtime?: 'memory' | 'bullmq';
  readonly redisUrl?: string;
  /** Answers given to every question the app asks, by question name or key. */
  readonly answers?: ScriptedAnswers;
  /** Retention and polling limits of the server. */
  readonly policy?: Partial<TaskPolicy>;
  /** Makes the client your tests use: pass the generated `createClient` for typed calls. */
  readonly client?: (core: TaskClient) => Client;
}

/**
 * An app served in-process with a client connected to it, made by `createTestHarness`. Close it
 * after each test (or suite); a BullMQ harness also removes its Redis keys.
 */
export interface TestHarness<Client = TaskClient> {
  /** The client: typed when `options.client` made it, else the task client. */
  readonly client: Client;
  /** The task client underneath, for calls by tool name. */
  readonly tasks: TaskClient;
  readonly server: TaskServer;
  /**
   * Moves task time on the in-process runtime: TTLs, expiry, and `ctx.sleep` (advancing past a
   * sleep's end wakes it at once). The BullMQ runtime runs by real time and refuses to move.
   */
  readonly clock: TestClock;
  readonly dialect: '2025-11-25' | '2026-07-28';
  readonly runtime: 'memory' | 'bullmq';
  /**
   * POSTs `payload` (as JSON) to a callback URL a task made (`hook.url`), through the server's
   * own route, as an outside system would; resolves with the HTTP status and the JSON answer
   * (200 taken; 400 not fitting the payload schema, the task keeps waiting; 404, 409, 410).
   */
  deliverCallback(url: string, payload: unknown): Promise<{ status: number; body: unknown }>;
  /** Calls a tool as a task; scripted answers answer its questions. */
  call(tool: string, args?: Record<string, unknown>, options?: CallOptions): Promise<TaskCall>;
  close(): Promise<void>;
}

const HARNESS_ORIGIN = 'http://127.0.0.1';
const HARNESS_URL = `${HARNESS_ORIGIN}/mcp`;

/**
 * Serves `app` with the real `createTaskServer`, reached through its `fetch` (no socket), and
 * connects a client to it in the chosen revision (`2026` by default). The runtime is in-process
 * with a clock the test moves (`clock.advance`), or BullMQ when `runtime: 'bullmq'`, under a key
 * prefix of its own so tests sharing a Redis never meet. Questions are answered from `answers`
 * and declined when it has none.
 *
 * Throws when `runtime` is `bullmq` without a Redis URL, and as `createTaskServer` does for a bad
 * manifest.
 *
 * @example
 * ```ts
 * import { createTestHarness, expectStatusSequence } from 'mcp-task-server/testing';
 * import { expect, it } from 'vitest';
 * import { taskManifest } from '../src/__generated__/tasks.generated.js';
 * import { Deployer } from '../src/deployer.js';
 *
 * it('deploys once approved', async () => {
 *   const harness = await createTestHarness(
 *     { manifest: taskManifest, instances: [new Deployer()] },
 *     { answers: { approval: { approve: true } } },
 *   );
 *   try {
 *     const call = await harness.call('deploy', { service: 'api' });
 *     await expectStatusSequence(call, ['working', 'input_required', 'working', 'completed']);
 *     expect((await call.result()).structuredContent).toEqual({ deployed: true });
 *   } finally {
 *     await harness.close();
 *   }
 * });
 * ```
 */
export async function createTestHarness<Client = TaskClient>(
  app: TestedApp,
  options: TestHarnessOptions<Client> = {},
): Promise<TestHarness<Client>> {
  const runtime = options.runtime ?? 'memory';
  const clock = createTestClock();
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL;
  if (runtime === 'bullmq' && !redisUrl)
    throw new Error('createTestHarness: runtime "bullmq" needs a Redis URL (redisUrl, or REDIS_URL)');
  const prefix = `mcp-test-${randomUUID()}`;
  const server = createTaskServer({
    name: app.name ?? 'test-harness',
    version: app.version ?? '0.0.0',
    manifest: app.manifest,
    instances: app.instances,
    logger: silentLogger,
    // Callback URLs point at the harness's own address; `deliverCallback` posts to them.
    publicUrl: HARNESS_ORIGIN,
    ...(options.policy && { policy: options.policy }),
    ...(runtime === 'bullmq'
      ? // A prefix of its own: tests sharing a Redis never see each other's keys.
        { redis: { connection: redisUrl as string, prefix }, workers: 4 }
      : { clock: clock.now, clockAdvances: clock.onAdvance }),
  });
  const answers = options.answers;
  let tasks: TaskClient;
  try {
    tasks = await connectTaskClient(HARNESS_URL, {
      dialect: options.dialect ?? '2026',
      fetch: (input, init) => {
        // No socket in between: the request goes straight to the server's handler, which
        // checks the Host header as it would for a real connection.
        const request = new Request(input, init);
        request.headers.set('host', new URL(request.url).host);
        return server.fetch(request);
      },
      defaultPollIntervalMs: 50,
      onQuestion: async (question) => (await scriptedAnswer(answers, question)) ?? { action: 'decline' },
    });
  } catch (error) {
    await server.close();
    throw error;
  }
  const answering = new Set<Promise<void>>();
  return {
    client: options.client ? options.client(tasks) : (tasks as Client),
    tasks,
    server,
    clock: {
      now: clock.now,
      advance(ms) {
        if (runtime === 'bullmq') {
          throw new Error('clock.advance: the BullMQ runtime expires tasks and wakes sleeps by Redis time');
        }
        clock.advance(ms);
        // Callback timeouts the clock passed fire now, not after the real time.
        if (server.runtime instanceof MemoryTaskRuntime) server.runtime.clockMoved();
      },
    },
    async deliverCallback(url, payload) {
      const request = new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', host: new URL(url).host },
        body: JSON.stringify(payload),
      });
      const response = await server.fetch(request, { remoteAddress: '127.0.0.1' });
      return { status: response.status, body: await response.json() };
    },
    dialect: tasks.dialect,
    runtime,
    async call(tool, args = {}, callOptions = {}) {
      const call = await tasks.call(tool, args, callOptions);
      if (answers && call.taskId) {
        const loop = answerQuestions(call, answers).finally(() => answering.delete(loop));
        answering.add(loop);
      }
      return call;
    },
    async close() {
      await tasks.close().catch(() => undefined);
      await Promise.allSettled([...answering]);
      await server.close();
      if (runtime === 'bullmq') await deleteKeys(redisUrl as string, prefix);
    },
  };
}

/** Removes what this harness wrote to Redis: only keys under its own prefix. */
async function deleteKeys(url: string, prefix: string): Promise<void> {
  // Loaded here, not on import: a harness on the memory runtime never needs ioredis.
  const { Redis } = createRequire(import.meta.url)('ioredis') as typeof Ioredis;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function answerQuestions(call: TaskCall, script: ScriptedAnswers): Promise<void> {
  try {
    for await (const event of call.events) {
      if (event.type !== 'question') continue;
      const answer = await scriptedAnswer(script, event.question);
      if (answer) await call.respond(event.question.key, answer);
    }
  } catch {
    // The task vanished or the client closed: the test's own assertions say what went wrong.
  }
}

/**
 * Follows `call` to its end and checks the statuses it went through (repeats collapsed), e.g.
 * `['working', 'input_required', 'working', 'completed']`. Throws, naming both sequences, when
 * they differ; resolves with the sequence seen.
 */
export async function expectStatusSequence(call: TaskCall, expected: readonly TaskStatus[]): Promise<TaskStatus[]> {
  const seen: TaskStatus[] = [];
  for await (const event of call.events) {
    if (event.type === 'status' && seen.at(-1) !== event.task.status) seen.push(event.task.status);
  }
  if (seen.length !== expected.length || seen.some((status, i) => status !== expected[i]))
    throw new Error(`expected the statuses ${JSON.stringify(expected)}, saw ${JSON.stringify(seen)}`);
  return seen;
}

/** One harness configuration of `harnessMatrix()`. */
export interface HarnessVariant {
  readonly name: string;
  readonly dialect: '2025' | '2026';
  readonly runtime: 'memory' | 'bullmq';
}

/**
 * The configurations worth running an app's tests in: both dialects on the in-process runtime,
 * plus both on BullMQ when `REDIS_URL` is set. Use with `describe.each(harnessMatrix())`.
 */
export function harnessMatrix(env: Record<string, string | undefined> = process.env): HarnessVariant[] {
  const runtimes: ('memory' | 'bullmq')[] = env.REDIS_URL ? ['memory', 'bullmq'] : ['memory'];
  return runtimes.flatMap((runtime) =>
    (['2026', '2025'] as const).map((dialect) => ({ name: `${runtime}, ${dialect}`, dialect, runtime })),
  );
}
