/**
 * `connectTaskClient()`: an MCP client for task tools on any server that speaks either task
 * dialect. It is the official SDK v2 `Client` (negotiation, `tools/list`, elicitation), plus
 * task traffic on the same transport (`raw-channel.ts`) in the dialect the server offers:
 * 2026-07-28 with the tasks extension, else 2025-11-25 core tasks.
 */
import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  Client,
  type FetchLike,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { TaskClientError, TaskClientErrorCode } from './errors.js';
import type { ListenTarget } from './listen-stream.js';
import { PACKAGE_VERSION } from './package-version.js';
import { RawChannel } from './raw-channel.js';
import { TaskHandle, type TaskHandleHost } from './task-handle.js';
import {
  type InlineQuestions,
  isObject,
  questionFrom,
  RELATED_TASK_META_KEY,
  TASKS_EXTENSION,
  type TaskWire,
  toElicitResult,
  Wire2025,
  Wire2026,
} from './task-wire.js';
import type {
  Dialect,
  DialectChoice,
  QuestionAnswer,
  TaskEvent,
  TaskQuestion,
  TaskSnapshot,
  ToolSummary,
} from './types.js';

/** Where the server is: a Streamable HTTP URL, a command to run over stdio, or a transport. */
export type TaskServerTarget =
  | string
  | URL
  | { readonly url: string | URL }
  | {
      readonly command: string;
      readonly args?: readonly string[];
      readonly env?: Record<string, string>;
      readonly cwd?: string;
    }
  | { readonly transport: () => Transport | Promise<Transport> };

/**
 * How `connectTaskClient` connects: which revision to speak, credentials, and who answers
 * questions that arrive outside a task handle.
 */
export interface TaskClientOptions {
  /** `auto` (default): 2026-07-28 when the server offers the tasks extension, else 2025-11-25. */
  readonly dialect?: DialectChoice;
  /** Extra HTTP headers on every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A bearer token, sent as `Authorization: Bearer <token>`. */
  readonly bearer?: string;
  /** HTTP only: the fetch to use (an in-process server's `fetch`, for instance). */
  readonly fetch?: FetchLike;
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Poll interval when the server suggests none (default 1000 ms). */
  readonly defaultPollIntervalMs?: number;
  /**
   * Answers questions asked outside a task handle's view: on a call without a task, or before a
   * task is created (2026-07-28). Without it such questions are declined.
   */
  readonly onQuestion?: (question: TaskQuestion) => QuestionAnswer | Promise<QuestionAnswer>;
}

/** Options of one `TaskClient.call`. */
export interface CallOptions {
  /** Run as a task (default true). `false` makes a plain call and returns a settled handle. */
  readonly task?: boolean;
  /** Requested retention (2025-11-25 `task.ttl`); the server may cap it. */
  readonly ttlMs?: number;
}

/**
 * A call's handle: a task, or a call the server answered at once (then `taskId` is undefined
 * and every method answers from what it returned). `events` streams status, progress and
 * questions; `answer`/`decline`/`respond` reply to a question by its key; `result()` resolves
 * with the tool result once the task completes, and rejects with a `TaskClientError` when it
 * was cancelled or failed with a JSON-RPC error (`JsonRpcResponseError`).
 */
export interface TaskCall {
  readonly taskId: string | undefined;
  readonly dialect: Dialect;
  status(): Promise<TaskSnapshot>;
  readonly events: AsyncIterable<TaskEvent>;
  answer(key: string, content: Record<string, unknown>): Promise<void>;
  decline(key: string, action?: 'decline' | 'cancel'): Promise<void>;
  respond(key: string, answer: QuestionAnswer): Promise<void>;
  cancel(): Promise<TaskSnapshot>;
  result(): Promise<CallToolResult>;
}

/**
 * A connection to one MCP server, made by `connectTaskClient`: call tools as tasks and follow
 * them with one handle in either revision. Close it when done; open handles stop following.
 */
export interface TaskClient {
  /** The dialect this connection speaks. */
  readonly dialect: Dialect;
  /** The underlying SDK client, for everything that is not a task. */
  readonly sdk: Client;
  listTools(): Promise<ToolSummary[]>;
  /** Calls a tool, as a task unless `task: false`. */
  call(tool: string, args?: Record<string, unknown>, options?: CallOptions): Promise<TaskCall>;
  /** A handle for a task created earlier, by this client or another (after a restart, say). */
  task(taskId: string): TaskHandle;
  /** 2025-11-25 only (2026-07-28 has no listing): one page of the caller's tasks. */
  listTasks(cursor?: string): Promise<{ tasks: TaskSnapshot[]; nextCursor?: string }>;
  close(): Promise<void>;
}

const DEFAULT_CLIENT_INFO = { name: 'mcp-task-server-client', version: PACKAGE_VERSION };

/**
 * Connects to an MCP server that runs task tools, over Streamable HTTP (a URL), stdio (a
 * command) or a transport of your own, and picks the task revision: 2026-07-28 when the server
 * offers the tasks extension, else 2025-11-25 core tasks (or the one `options.dialect` forces).
 * Works with any server that speaks either revision, not only this package's.
 *
 * Rejects with `TaskClientError` code `tasks_unsupported` when the server offers no task
 * revision the options allow, and with the transport's error when it cannot connect.
 *
 * @example
 * ```ts
 * import { connectTaskClient } from 'mcp-task-server/client';
 *
 * const client = await connectTaskClient('http://127.0.0.1:3000/mcp');
 * try {
 *   const call = await client.call('deploy', { service: 'api' });
 *   for await (const event of call.events) {
 *     if (event.type === 'progress') console.log(event.message ?? `${event.progress}/${event.total ?? '?'}`);
 *     if (event.type === 'question') await call.answer(event.question.key, { approve: true });
 *   }
 *   console.log((await call.result()).structuredContent);
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export async function connectTaskClient(
  target: TaskServerTarget,
  options: TaskClientOptions = {},
): Promise<TaskClient> {
  const choice = options.dialect ?? 'auto';
  const first = await open(
    target,
    options,
    choice === '2026' ? { pin: '2026-07-28' } : choice === '2025' ? 'legacy' : 'auto',
  );
  if (first.client.getProtocolEra() === 'modern') {
    if (offersTasksExtension(first.client))
      return new Connected(first.client, first.channel, '2026-07-28', options, listenTargetOf(target, options));
    if (choice === '2026') {
      await first.client.close();
      throw new TaskClientError(
        TaskClientErrorCode.Unsupported,
        'The server speaks 2026-07-28 but offers no tasks extension',
      );
    }
    // A 2026 server without the extension may still serve 2025-11-25 core tasks.
    await first.client.close();
    const legacy = await open(target, options, 'legacy');
    return new Connected(legacy.client, legacy.channel, '2025-11-25', options);
  }
  return new Connected(first.client, first.channel, '2025-11-25', options);
}

/** Where a listen stream of its own can go: HTTP targets only (stdio has one pipe). */
function listenTargetOf(target: TaskServerTarget, options: TaskClientOptions): ListenTarget | undefined {
  if (typeof target === 'object' && !(target instanceof URL) && !('url' in target)) return undefined;
  const url = typeof target === 'string' || target instanceof URL ? target : target.url;
  return {
    url: new URL(url),
    headers: httpHeaders(options),
    ...(options.fetch && { fetch: options.fetch }),
  };
}

function httpHeaders(options: TaskClientOptions): Record<string, string> {
  return {
    ...options.headers,
    ...(options.bearer !== undefined && { authorization: `Bearer ${options.bearer}` }),
  };
}

function offersTasksExtension(client: Client): boolean {
  const extensions = client.getServerCapabilities()?.extensions as Record<string, unknown> | undefined;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

async function open(
  target: TaskServerTarget,
  options: TaskClientOptions,
  mode: 'legacy' | 'auto' | { pin: string },
): Promise<{ client: Client; channel: RawChannel }> {
  const { transport, channel } = RawChannel.wrap(await transportFor(target, options));
  const client = new Client(options.clientInfo ?? DEFAULT_CLIENT_INFO, {
    // `tasks` tells a 2025-11-25 server that this client takes tasks, so it gets tasks rather
    // than the handles and companion tools a server offers to clients that cannot.
    capabilities: { elicitation: { form: {} }, tasks: {} },
    versionNegotiation: { mode },
  });
  await client.connect(transport);
  return { client, channel };
}

async function transportFor(target: TaskServerTarget, options: TaskClientOptions): Promise<Transport> {
  if (typeof target === 'object' && 'transport' in target) return target.transport();
  if (typeof target === 'object' && 'command' in target) {
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    return new StdioClientTransport({
      command: target.command,
      args: [...(target.args ?? [])],
      ...(target.env && { env: target.env }),
      ...(target.cwd && { cwd: target.cwd }),
      stderr: 'inherit',
    });
  }
  const url = typeof target === 'string' || target instanceof URL ? target : target.url;
  const headers = httpHeaders(options);
  return new StreamableHTTPClientTransport(new URL(url), {
    ...(Object.keys(headers).length > 0 && { requestInit: { headers } }),
    ...(options.fetch && { fetch: options.fetch }),
  }) as Transport;
}

class Connected implements TaskClient {
  private readonly wire: TaskWire;
  private readonly handles = new Map<string, TaskHandle>();
  private readonly progressTokens = new Map<string, TaskHandle>();
  private readonly host: TaskHandleHost;

  constructor(
    readonly sdk: Client,
    channel: RawChannel,
    readonly dialect: Dialect,
    private readonly options: TaskClientOptions,
    listenTarget?: ListenTarget,
  ) {
    const wire2026 =
      dialect === '2026-07-28'
        ? new Wire2026(channel, options.clientInfo ?? DEFAULT_CLIENT_INFO, listenTarget)
        : undefined;
    this.wire = wire2026 ?? new Wire2025(channel);
    this.host = {
      wire: this.wire,
      defaultPollIntervalMs: options.defaultPollIntervalMs ?? 1000,
      delivered: () => channel.delivered(),
      // Where offered, a listen stream pushes the task's status; polling stays as the floor.
      ...(wire2026 && {
        subscribe: (taskId: string) => wire2026.listen(taskId, (method, params) => this.route(method, params)),
      }),
    };
    channel.onNotification((method, params) => this.route(method, params));
    sdk.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as unknown as Record<string, unknown>;
      const related = ((params._meta ?? {}) as Record<string, unknown>)[RELATED_TASK_META_KEY];
      const taskId = isObject(related) && typeof related.taskId === 'string' ? related.taskId : undefined;
      if (taskId !== undefined) return (await this.task(taskId).receiveQuestion(params)) as never;
      return toElicitResult(await this.askOutside(questionFrom('question', params))) as never;
    });
  }

  async listTools(): Promise<ToolSummary[]> {
    const tools: ToolSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.sdk.listTools(cursor !== undefined ? { cursor } : undefined);
      for (const tool of page.tools) {
        const execution = (tool as { execution?: { taskSupport?: ToolSummary['taskSupport'] } }).execution;
        tools.push({
          name: tool.name,
          ...(tool.title !== undefined && { title: tool.title }),
          ...(tool.description !== undefined && { description: tool.description }),
          inputSchema: tool.inputSchema as Record<string, unknown>,
          ...(tool.outputSchema && { outputSchema: tool.outputSchema as Record<string, unknown> }),
          ...(execution?.taskSupport && { taskSupport: execution.taskSupport }),
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  async call(tool: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<TaskCall> {
    const asTask = options.task !== false && (await this.offersTask(tool));
    const progressToken = `mcp-task-call-${randomUUID()}`;
    const inline: InlineQuestions = async (questions) =>
      Object.fromEntries(await Promise.all(questions.map(async (q) => [q.key, await this.askOutside(q)] as const)));
    const reply = await this.wire.callTool(tool, args, {
      task: asTask,
      ...(options.ttlMs !== undefined && { ttlMs: options.ttlMs }),
      progressToken,
      inline,
    });
    if (reply.kind === 'result') return settledCall(this.dialect, reply.result);
    const handle = this.adopt(reply.task.taskId, reply.task);
    this.progressTokens.set(progressToken, handle);
    return handle;
  }

  task(taskId: string): TaskHandle {
    return this.adopt(taskId);
  }

  async listTasks(cursor?: string) {
    if (!this.wire.list)
      throw new TaskClientError(
        TaskClientErrorCode.Unsupported,
        '2026-07-28 has no tasks/list; keep the task ids you create',
      );
    return this.wire.list(cursor);
  }

  async close(): Promise<void> {
    await this.sdk.close();
  }

  /** 2025-11-25: ask for a task only where the server and the tool allow one (docs/traceability.md, B rows). */
  private taskSupport: Map<string, string | undefined> | undefined;
  private async offersTask(tool: string): Promise<boolean> {
    if (this.dialect === '2026-07-28') return true;
    const tasks = this.sdk.getServerCapabilities()?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
    if (tasks?.requests?.tools?.call === undefined) return false;
    if (!this.taskSupport?.has(tool))
      this.taskSupport = new Map((await this.listTools()).map((t) => [t.name, t.taskSupport]));
    const support = this.taskSupport.get(tool);
    return support === 'optional' || support === 'required';
  }

  private adopt(taskId: string, initial?: TaskSnapshot): TaskHandle {
    let handle = this.handles.get(taskId);
    if (!handle) {
      handle = new TaskHandle(this.host, taskId, initial);
      this.handles.set(taskId, handle);
    }
    return handle;
  }

  private async askOutside(question: TaskQuestion): Promise<QuestionAnswer> {
    return this.options.onQuestion ? this.options.onQuestion(question) : { action: 'decline' };
  }

  private route(method: string, params: Record<string, unknown>): void {
    const update = this.wire.pushed(method, params);
    if (update) this.handles.get(update.task.taskId)?.notified(update);
    else if (method === 'notifications/progress') {
      const handle = this.progressTokens.get(String(params.progressToken));
      if (handle && typeof params.progress === 'number')
        handle.progressed(
          params.progress,
          typeof params.total === 'number' ? params.total : undefined,
          typeof params.message === 'string' ? params.message : undefined,
        );
    }
  }
}

/** A call the server answered without a task. */
function settledCall(dialect: Dialect, result: CallToolResult): TaskCall {
  const now = new Date().toISOString();
  const task: TaskSnapshot = {
    taskId: '',
    status: result.isError ? 'failed' : 'completed',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: null,
    questions: [],
  };
  const noQuestion = (key: string) =>
    Promise.reject(new TaskClientError(TaskClientErrorCode.NoSuchQuestion, `The call has ended; no question '${key}'`));
  return {
    taskId: undefined,
    dialect,
    status: async () => task,
    events: {
      async *[Symbol.asyncIterator]() {
        yield { type: 'status', task } as TaskEvent;
      },
    },
    answer: noQuestion,
    decline: noQuestion,
    respond: noQuestion,
    cancel: async () => task,
    result: async () => result,
  };
}
