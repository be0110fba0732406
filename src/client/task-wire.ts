/**
 * The task methods of one dialect, over the raw channel, read into the client's own shapes
 * (`types.ts`): 2025-11-25 core tasks, and the 2026-07-28 tasks extension.
 * No other file knows a wire field name.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { type ListenTarget, listenForTask } from './listen-stream.js';
import type { RawChannel } from './raw-channel.js';
import type { Dialect, QuestionAnswer, TaskQuestion, TaskSnapshot, TaskStatus } from './types.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';
/** Where our server names a 2025-11-25 question's key (the wire has no field for it). */
export const QUESTION_KEY_META_KEY = 'mcp-task-server/question-key';

/** How a task ended, when it has. */
export type TaskOutcome =
  | { readonly kind: 'result'; readonly result: CallToolResult }
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data?: unknown };

export type CallReply =
  | { readonly kind: 'task'; readonly task: TaskSnapshot }
  | { readonly kind: 'result'; readonly result: CallToolResult };

/** Answers the questions a 2026-07-28 server asks on the call itself, before any task exists. */
export type InlineQuestions = (questions: readonly TaskQuestion[]) => Promise<Record<string, QuestionAnswer>>;

export interface CallOptions {
  /** Ask for a task (2025-11-25 `params.task`); a 2026-07-28 server decides by itself. */
  readonly task: boolean;
  readonly ttlMs?: number;
  readonly progressToken?: string;
  readonly inline?: InlineQuestions;
}

export interface TaskWire {
  readonly dialect: Dialect;
  callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallReply>;
  get(taskId: string): Promise<{ task: TaskSnapshot; outcome?: TaskOutcome }>;
  cancel(taskId: string): Promise<void>;
  /** 2026-07-28: `tasks/update`. 2025-11-25 answers go back on the elicitation itself. */
  answer?(taskId: string, answers: Record<string, QuestionAnswer>): Promise<void>;
  /** 2025-11-25: the blocking `tasks/result`, which also carries the task's questions. */
  result?(taskId: string): Promise<CallToolResult>;
  /** 2025-11-25: `tasks/list`. */
  list?(cursor?: string): Promise<{ tasks: TaskSnapshot[]; nextCursor?: string }>;
  /** Reads a pushed status (`notifications/tasks/status` or `notifications/tasks`). */
  pushed(method: string, params: Json): { task: TaskSnapshot; outcome?: TaskOutcome } | undefined;
}

type Json = Record<string, unknown>;

export class Wire2025 implements TaskWire {
  readonly dialect = '2025-11-25' as const;
  constructor(private readonly raw: RawChannel) {}

  async callTool(name: string, args: Json, options: CallOptions): Promise<CallReply> {
    const reply = await this.raw.request('tools/call', {
      name,
      arguments: args,
      ...(options.task && { task: options.ttlMs !== undefined ? { ttl: options.ttlMs } : {} }),
      ...(options.progressToken !== undefined && { _meta: { progressToken: options.progressToken } }),
    });
    if (isObject(reply.task)) return { kind: 'task', task: snapshot2025(reply.task) };
    return { kind: 'result', result: reply as CallToolResult };
  }

  async get(taskId: string) {
    return { task: snapshot2025(await this.raw.request('tasks/get', { taskId })) };
  }

  async cancel(taskId: string): Promise<void> {
    await this.raw.request('tasks/cancel', { taskId });
  }

  async result(taskId: string): Promise<CallToolResult> {
    const result = await this.raw.request('tasks/result', { taskId });
    const { [RELATED_TASK_META_KEY]: _related, ...meta } = (result._meta ?? {}) as Json;
    const { _meta, ...rest } = result;
    return (Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest) as CallToolResult;
  }

  pushed(method: string, params: Json) {
    if (method !== 'notifications/tasks/status' || !isTask(params)) return undefined;
    return { task: snapshot2025(params) };
  }

  async list(cursor?: string) {
    const page = await this.raw.request('tasks/list', cursor !== undefined ? { cursor } : {});
    return {
      tasks: ((page.tasks ?? []) as Json[]).map(snapshot2025),
      ...(typeof page.nextCursor === 'string' && { nextCursor: page.nextCursor }),
    };
  }
}

export class Wire2026 implements TaskWire {
  readonly dialect = '2026-07-28' as const;
  constructor(
    private readonly raw: RawChannel,
    private readonly clientInfo: { name: string; version: string },
    private readonly listenTarget?: ListenTarget,
  ) {}

  private envelope(declareTasks: boolean): Json {
    return {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': this.clientInfo,
      'io.modelcontextprotocol/clientCapabilities': {
        elicitation: { form: {} },
        ...(declareTasks && { extensions: { [TASKS_EXTENSION]: {} } }),
      },
    };
  }

  /**
   * The per-request envelope (docs/design/protocol-rules.md §5.2): every request declares the extension, except a call that
   * must not become a task (the server may only create one when the request declares it).
   */
  private request(method: string, params: Json, declareTasks = true): Promise<Json> {
    return this.raw.request(method, {
      ...params,
      _meta: { ...(params._meta as Json | undefined), ...this.envelope(declareTasks) },
    });
  }

  async callTool(name: string, args: Json, options: CallOptions): Promise<CallReply> {
    let retry: Json = {};
    // Multi-round-trip input before any task exists (docs/design/protocol-rules.md §5.3): answer, then call again.
    for (let round = 0; round < 8; round++) {
      const reply = await this.request('tools/call', { name, arguments: args, ...retry }, options.task);
      if (reply.resultType === 'task') return { kind: 'task', task: snapshot2026(reply) };
      if (reply.resultType !== 'input_required') {
        const { resultType: _type, ...result } = reply;
        return { kind: 'result', result: result as CallToolResult };
      }
      const questions = questionsOf(reply.inputRequests);
      if (!options.inline) return { kind: 'result', result: declinedInline(questions) };
      const answers = await options.inline(questions);
      retry = {
        inputResponses: Object.fromEntries(Object.entries(answers).map(([key, a]) => [key, toElicitResult(a)])),
        ...(reply.requestState !== undefined && { requestState: reply.requestState }),
      };
    }
    throw new Error(`${name}: the server kept asking questions on the call (8 rounds)`);
  }

  pushed(method: string, params: Json) {
    if (method !== 'notifications/tasks' || !isTask(params)) return undefined;
    return detailed(params);
  }

  async get(taskId: string) {
    return detailed(await this.request('tasks/get', { taskId }));
  }

  async cancel(taskId: string): Promise<void> {
    await this.request('tasks/cancel', { taskId });
  }

  async answer(taskId: string, answers: Record<string, QuestionAnswer>): Promise<void> {
    const inputResponses = Object.fromEntries(Object.entries(answers).map(([key, a]) => [key, toElicitResult(a)]));
    await this.request('tasks/update', { taskId, inputResponses });
  }

  /**
   * Opens a `subscriptions/listen` for one task (docs/design/protocol-rules.md §5.7) where the connection allows one of its
   * own (Streamable HTTP); returns the function that closes it.
   */
  listen(taskId: string, onNotification: (method: string, params: Json) => void): (() => void) | undefined {
    if (!this.listenTarget) return undefined;
    const body = {
      jsonrpc: '2.0',
      id: `mcp-task-listen-${taskId}`,
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] }, _meta: this.envelope(true) },
    };
    return listenForTask(this.listenTarget, body, onNotification);
  }
}

/** A 2026-07-28 DetailedTask (`tasks/get`, `notifications/tasks`), with its inlined outcome. */
function detailed(reply: Json): { task: TaskSnapshot; outcome?: TaskOutcome } {
  const task = snapshot2026(reply);
  if (isObject(reply.error)) {
    const error = reply.error as { code: number; message: string; data?: unknown };
    return { task, outcome: { kind: 'error' as const, code: error.code, message: error.message, data: error.data } };
  }
  if (isObject(reply.result)) {
    const { resultType: _type, ...result } = reply.result;
    return { task, outcome: { kind: 'result' as const, result: result as CallToolResult } };
  }
  return { task };
}

function isTask(params: Json): boolean {
  return typeof params.taskId === 'string' && typeof params.status === 'string';
}

export function toElicitResult(answer: QuestionAnswer): Json {
  return answer.action === 'accept' ? { action: 'accept', content: answer.content } : { action: answer.action };
}

/** A 2025-11-25 task: `ttl` and `pollInterval`, questions come as separate requests. */
function snapshot2025(task: Json): TaskSnapshot {
  return snapshotOf(task, task.ttl, task.pollInterval, []);
}

/** A 2026-07-28 task: `ttlMs` and `pollIntervalMs`, its open questions in `inputRequests`. */
function snapshot2026(task: Json): TaskSnapshot {
  return snapshotOf(task, task.ttlMs, task.pollIntervalMs, questionsOf(task.inputRequests));
}

/** The fields both dialects share, with the two they name differently already picked. */
function snapshotOf(task: Json, ttl: unknown, pollInterval: unknown, questions: TaskQuestion[]): TaskSnapshot {
  return {
    taskId: String(task.taskId),
    status: task.status as TaskStatus,
    ...(typeof task.statusMessage === 'string' && { statusMessage: task.statusMessage }),
    createdAt: String(task.createdAt),
    lastUpdatedAt: String(task.lastUpdatedAt),
    ttlMs: typeof ttl === 'number' ? ttl : null,
    ...(typeof pollInterval === 'number' && { pollIntervalMs: pollInterval }),
    questions,
  };
}

/** The elicitation forms of an `inputRequests` map; other kinds (sampling, roots) are skipped. */
function questionsOf(inputRequests: unknown): TaskQuestion[] {
  if (!isObject(inputRequests)) return [];
  return Object.entries(inputRequests).flatMap(([key, request]) => {
    if (!isObject(request) || request.method !== 'elicitation/create' || !isObject(request.params)) return [];
    return [questionFrom(key, request.params)];
  });
}

export function questionFrom(key: string, params: Json): TaskQuestion {
  return {
    key,
    message: typeof params.message === 'string' ? params.message : key,
    requestedSchema: isObject(params.requestedSchema) ? params.requestedSchema : { type: 'object', properties: {} },
  };
}

function declinedInline(questions: readonly TaskQuestion[]): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text: `The server asked ${questions.map((q) => `'${q.key}'`).join(', ')} on the call, and nothing here answers questions`,
      },
    ],
    isError: true,
  };
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
