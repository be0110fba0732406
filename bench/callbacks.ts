/**
 * Callback waits against question waits, side by side on one BullMQ runtime with one worker
 * slot: N tasks park on a `ctx.callback` hook, N on a question (the wait the framework had
 * before). Reported, per side:
 *
 * - Redis bytes per parked task (`MEMORY USAGE`, `SAMPLES 0`, over this run's keys, the token
 *   index and the parked set included), and the ratio callback / question;
 * - that all N parked on one slot (none holds it: the slot is free for a plain task meanwhile);
 * - the median time from the delivery (POST payload / answer) to the task's end, and the ratio.
 *
 *   node --conditions=mcp-task-server-source --import tsx bench/callbacks.ts [N]
 */
import type { Caller } from '../src/engine/engine.js';
import { TaskEngine } from '../src/engine/engine.js';
import type { ExecutionControl, TaskExecutor } from '../src/engine/runtime.js';
import type { TaskOutcome, TaskRecord } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime } from '../src/runtime/bullmq/index.js';
import { deleteKeysUnder, fmt, keysUnder, median, REDIS_URL, randomId, redisClient } from './support.js';

const N = Number(process.argv[2] ?? 200);
const CALLER: Caller = { principal: 'bench' };
const done = (text: string): TaskOutcome => ({
  kind: 'result',
  result: { content: [{ type: 'text', text }] },
  isError: false,
});

/** Tokens the callback runs got, by task id. */
const tokens = new Map<string, string>();

const executor: TaskExecutor = {
  async execute(record: TaskRecord, control: ExecutionControl): Promise<TaskOutcome> {
    const { kind } = record.args as { kind: string };
    if (kind === 'plain') return done('plain');
    if (kind === 'question') {
      const answer = await control.ask('q', {
        question: 'q',
        params: {
          mode: 'form',
          message: 'ok?',
          requestedSchema: { type: 'object', properties: { v: { type: 'string' } } },
        },
      });
      return done(String(answer.content?.v));
    }
    const hook = await (control.callback as NonNullable<ExecutionControl['callback']>)('ci', {
      name: 'ci',
      timeoutMs: 600_000,
    });
    tokens.set(record.taskId, hook.token);
    const result = await hook.wait();
    return done(result.status);
  },
};

async function main(): Promise<void> {
  const prefix = `bench-cb-${randomId()}`;
  const runtime = new BullmqTaskRuntime({
    connection: REDIS_URL,
    prefix,
    logger: silentLogger,
    worker: { executor, concurrency: 1, inputGraceMs: 0, logger: silentLogger },
  });
  await runtime.worker?.started;
  const engine = new TaskEngine({ runtime, policy: { maxLiveTasksPerOwner: 1_000_000 } });
  const client = redisClient();
  try {
    const rows: Record<string, { bytes: number; resumeMs: number }> = {};
    for (const kind of ['question', 'callback'] as const) {
      const before = await bytesUnder(client, prefix);
      const ids: string[] = [];
      for (let index = 0; index < N; index++) {
        ids.push((await engine.create(CALLER, { tool: 't', args: { kind }, toolTtlMs: 3_600_000 })).taskId);
      }
      const parked = (record: TaskRecord) =>
        kind === 'question' ? record.status === 'input_required' : record.statusMessage === 'waiting for callback ci';
      for (const id of ids) await engine.waitFor(CALLER, id, parked);
      // Parked means off the slot: let the last run let go, then see a plain task run on it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const plain = await engine.create(CALLER, { tool: 't', args: { kind: 'plain' } });
      await engine.waitForTerminal(CALLER, plain.taskId);
      const bytes = ((await bytesUnder(client, prefix)) - before) / N;
      const resume: number[] = [];
      for (const id of ids) {
        const start = performance.now();
        if (kind === 'question') {
          await engine.answer(CALLER, id, { q: { action: 'accept', content: { v: 'x' } } }, () => undefined);
        } else {
          await engine.deliverCallback(tokens.get(id) as string, { ok: true }, (_tool, _name, payload) => ({
            ok: true,
            payload,
          }));
        }
        await engine.waitForTerminal(CALLER, id);
        resume.push(performance.now() - start);
      }
      rows[kind] = { bytes, resumeMs: median(resume) };
      console.log(
        `${kind}: ${N} parked on 1 slot (a plain task ran meanwhile); ${fmt(bytes)} B/parked task; delivery→end median ${fmt(median(resume), 1)} ms`,
      );
    }
    const q = rows.question as { bytes: number; resumeMs: number };
    const c = rows.callback as { bytes: number; resumeMs: number };
    console.log(
      `ratio callback/question: bytes ${fmt(c.bytes / q.bytes, 2)}, delivery→end ${fmt(c.resumeMs / q.resumeMs, 2)}`,
    );
  } finally {
    client.disconnect();
    await runtime.close();
    await deleteKeysUnder(prefix);
  }
}

async function bytesUnder(client: ReturnType<typeof redisClient>, prefix: string): Promise<number> {
  let total = 0;
  for (const key of await keysUnder(client, prefix)) {
    if (key.endsWith(':events')) continue;
    total += Number((await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  }
  return total;
}

await main();
