/**
 * What `bench/scale.ts` and its child processes (`scale-load.ts`, `scale-worker.ts`) agree on:
 * the setups measured, and the messages they exchange over the IPC channel of `fork`.
 */
import { fork } from 'node:child_process';
import type { RedisConnection } from '../src/runtime/bullmq/index.js';

/** One app deployment measured: where Redis is and how many shards its tasks are spread over. */
export interface ScaleSetup {
  /** Short id, e.g. `cluster-3`. */
  readonly id: string;
  /** Plain-words name for the output, e.g. `cluster, 3 shards`. */
  readonly name: string;
  /** A `redis://` URL or `{ clusterNodes }`: what the runtime and the workers are given. */
  readonly connection: RedisConnection;
  readonly shards: number;
  readonly prefix: string;
  /** Setups that share a queue (and so its workers) differ only in the load process. */
  readonly queue: string;
  /**
   * The engine's `maxLiveTasksPerOwner` (default 1000). With it, a create on N shards first
   * counts the owner's live tasks on the N - 1 others; `null` turns the bound off.
   */
  readonly maxLiveTasksPerOwner?: null;
  /**
   * Worker process `i` consumes shard `i mod shards` only (`consumeShards`, as
   * `TASK_WORKER_SHARDS` does), instead of every shard with its concurrency split among them.
   */
  readonly workerPerShard?: true;
}

/** Parent → child. */
export type ScaleRequest =
  | { readonly type: 'cpu' }
  /** Load process only: create `n` no-op tasks on `setup` and wait until all have completed. */
  | { readonly type: 'run'; readonly setup: string; readonly n: number }
  | { readonly type: 'stop' };

/** Child → parent. */
export type ScaleReply =
  | { readonly type: 'ready' }
  /** This process's CPU (user + system) since it started, in µs. */
  | { readonly type: 'cpu'; readonly us: number }
  | { readonly type: 'ran'; readonly ms: number; readonly failed: number }
  | { readonly type: 'error'; readonly message: string };

/** How a child is given its setups: one JSON argument. */
export interface ScaleChildArgs {
  readonly setups: readonly ScaleSetup[];
  /** Worker processes only: jobs this process runs at once, divided among the shards it consumes. */
  readonly concurrency?: number;
  /** Worker processes only: this process's position among them, from 0. */
  readonly index?: number;
}

/** Wires a child's IPC channel to `handle`; a child whose parent is gone exits. */
export function serveParent(handle: (request: ScaleRequest) => Promise<ScaleReply | undefined>): void {
  const send = (reply: ScaleReply) => process.send?.(reply);
  process.on('message', (request: ScaleRequest) => {
    handle(request).then(
      (reply) => reply && send(reply),
      (error: unknown) => send({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  });
  process.on('disconnect', () => process.exit(1));
}

export function cpuReply(): ScaleReply {
  const used = process.cpuUsage();
  return { type: 'cpu', us: used.user + used.system };
}

export function childArgs(): ScaleChildArgs {
  const raw = process.argv[2];
  if (!raw) throw new Error('expected the setups as one JSON argument');
  return JSON.parse(raw) as ScaleChildArgs;
}

/** A child process of the benchmark, asked one thing at a time. */
export class ScaleChild {
  private readonly child;
  private readonly replies: ScaleReply[] = [];
  private waiting: ((reply: ScaleReply) => void) | undefined;
  readonly ready: Promise<void>;

  constructor(
    readonly name: string,
    file: string,
    args: ScaleChildArgs,
  ) {
    this.child = fork(new URL(file, import.meta.url).pathname, [JSON.stringify(args)], {
      execArgv: ['--conditions=mcp-task-server-source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (reply: ScaleReply) => {
      const waiter = this.waiting;
      this.waiting = undefined;
      if (waiter) waiter(reply);
      else this.replies.push(reply);
    });
    this.ready = this.next().then((reply) => {
      if (reply.type !== 'ready') throw new Error(`${name}: ${unexpected(reply)}`);
    });
    this.ready.catch(() => {});
  }

  async cpuUs(): Promise<number> {
    const reply = await this.ask({ type: 'cpu' });
    if (reply.type !== 'cpu') throw new Error(`${this.name}: ${unexpected(reply)}`);
    return reply.us;
  }

  async ask(request: ScaleRequest): Promise<ScaleReply> {
    this.child.send(request);
    const reply = await this.next();
    if (reply.type === 'error') throw new Error(`${this.name}: ${reply.message}`);
    return reply;
  }

  /** Asks the child to close its connections and exit; kills it (by its pid) if it does not. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    if (this.child.connected) this.child.send({ type: 'stop' } satisfies ScaleRequest);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  private next(): Promise<ScaleReply> {
    const queued = this.replies.shift();
    if (queued) return Promise.resolve(queued);
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.reject(new Error(`${this.name} has exited (${this.child.exitCode ?? this.child.signalCode})`));
    }
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${this.name} exited (${code}) before answering`));
      this.child.once('exit', onExit);
      this.waiting = (reply) => {
        this.child.off('exit', onExit);
        resolve(reply);
      };
    });
  }
}

function unexpected(reply: ScaleReply): string {
  return reply.type === 'error' ? reply.message : `unexpected reply ${reply.type}`;
}
