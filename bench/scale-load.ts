/**
 * The load process of `bench/scale.ts`: the server side of every setup (`TaskEngine.create` on
 * `BullmqTaskRuntime`, no worker in this process). Asked to `run`, it creates that many no-op
 * tasks, at most 50 in flight, and answers once the runtime has reported every one of them
 * terminal (pub/sub from the record write), as `bench/e2e.ts` does in one process.
 */
import { TaskEngine } from '../src/engine/engine.js';
import { isTerminal } from '../src/engine/task.js';
import { silentLogger } from '../src/observe/logger.js';
import { BullmqTaskRuntime } from '../src/runtime/bullmq/index.js';
import { childArgs, cpuReply, serveParent } from './scale-setups.js';
import { ARGS, inPool, now, TOOL, TOOL_OPTIONS } from './support.js';

const CREATES_IN_FLIGHT = 50;

/** One runtime per queue; setups that share a queue share its runtime and its event stream. */
interface Served {
  readonly runtime: BullmqTaskRuntime;
  /** Set while a run waits for its tasks. */
  countdown?: { left: number; failed: number; done: () => void };
}

const { setups } = childArgs();
const byQueue = new Map<string, Served>();
const engines = new Map<string, { engine: TaskEngine; served: Served }>();
for (const setup of setups) {
  let served = byQueue.get(setup.queue);
  if (!served) {
    const runtime = new BullmqTaskRuntime({
      connection: setup.connection,
      prefix: setup.prefix,
      queue: setup.queue,
      shards: setup.shards,
      logger: silentLogger,
    });
    const entry: Served = { runtime };
    runtime.subscribe(({ record }) => {
      const countdown = entry.countdown;
      if (!countdown || !isTerminal(record.status)) return;
      if (record.status !== 'completed') countdown.failed++;
      if (--countdown.left === 0) countdown.done();
    });
    byQueue.set(setup.queue, entry);
    served = entry;
  }
  const policy = setup.maxLiveTasksPerOwner === null ? { maxLiveTasksPerOwner: null } : {};
  engines.set(setup.id, { engine: new TaskEngine({ runtime: served.runtime, policy }), served });
}

const caller = { principal: null };

serveParent(async (request) => {
  switch (request.type) {
    case 'cpu':
      return cpuReply();
    case 'run': {
      const chosen = engines.get(request.setup);
      if (!chosen) throw new Error(`no setup ${request.setup}`);
      const { engine, served } = chosen;
      const start = now();
      const finished = new Promise<number>((resolve) => {
        const countdown = { left: request.n, failed: 0, done: () => resolve(countdown.failed) };
        served.countdown = countdown;
      });
      await inPool(request.n, CREATES_IN_FLIGHT, () =>
        engine.create(caller, { tool: TOOL, args: ARGS, ...TOOL_OPTIONS }),
      );
      const failed = await finished;
      served.countdown = undefined;
      return { type: 'ran', ms: now() - start, failed };
    }
    case 'stop':
      await Promise.all([...byQueue.values()].map(({ runtime }) => runtime.close()));
      process.exit(0);
  }
});

process.send?.({ type: 'ready' });
