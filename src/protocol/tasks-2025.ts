/**
 * Core tasks of protocol 2025-11-25 (`capabilities.tasks`, `params.task`,
 * `{ task }` results, blocking `tasks/result`). What VS Code, Inspector and the v1 SDK speak.
 * Its rules and their tests: docs/traceability.md, rows B-*.
 */
import type { Caller } from '../engine/engine.js';
import type { TaskRecord, TaskStatus } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { isPlainObject, optionalCursor, type Params, requireTaskId } from './params.js';
import type { QuestionLedger } from './question-ledger.js';
import { type Elicit, relayQuestionsUntilDone } from './question-relay.js';
import { relatedTasksMeta } from './related-tasks.js';
import { asRpc } from './rpc-error.js';
import { type CallContext, describeTool, type ToolCalls } from './tool-calls.js';

export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

export type { Elicit } from './question-relay.js';

/** An `elicitation/create`'s params with the related-task `_meta` naming the task that asks. */
export function withRelatedTask(params: Record<string, unknown>, taskId: string): Record<string, unknown> {
  const meta = isPlainObject(params._meta) ? params._meta : {};
  return { ...params, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
}

/** The 2025-11-25 `Task` object. */
export interface Task2025 {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
  /** On a child task (`ctx.spawn`): `{ "io.modelcontextprotocol/relatedTaskIds": [parentId] }`. */
  _meta?: Record<string, unknown>;
}

export function toTask2025(record: TaskRecord): Task2025 {
  return {
    taskId: record.taskId,
    status: status2025(record),
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttl: record.ttlMs,
    pollInterval: record.pollIntervalMs,
    ...relatedTasksMeta(record),
  };
}

/**
 * On 2025-11-25 a tool result with `isError: true` fails the task (docs/design/protocol-rules.md §4.4);
 * the record calls it completed.
 */
export function status2025(record: TaskRecord): TaskStatus {
  return record.status === 'completed' && record.outcome?.kind === 'result' && record.outcome.isError
    ? 'failed'
    : record.status;
}

export function serverCapabilities2025(options: { list: boolean }): Record<string, unknown> {
  return {
    tools: {},
    tasks: { ...(options.list && { list: {} }), cancel: {}, requests: { tools: { call: {} } } },
  };
}

export class Tasks2025Dialect {
  constructor(private readonly calls: ToolCalls) {}

  listTools(): { tools: Record<string, unknown>[] } {
    return {
      tools: this.calls.registry.list().map((tool) => ({
        ...describeTool(tool),
        execution: { taskSupport: tool.taskSupport },
      })),
    };
  }

  /** `tools/call`, with or without `params.task` (docs/design/protocol-rules.md §4.2, §4.3). */
  async callTool(params: Params, ctx: CallContext): Promise<Record<string, unknown>> {
    const { tool, args } = this.calls.resolve(params);
    this.calls.checkClientCapabilities(tool, ctx.clientCapabilities);
    const task = params?.task;
    const wantsTask = task !== undefined && task !== null;
    if (wantsTask && tool.taskSupport === 'forbidden') {
      throw new JsonRpcError(
        JsonRpcErrorCode.MethodNotFound,
        `Tool ${tool.name} does not support task-augmented calls (taskSupport: 'forbidden')`,
      );
    }
    if (!wantsTask && tool.taskSupport === 'required') {
      throw new JsonRpcError(
        JsonRpcErrorCode.MethodNotFound,
        `Tool ${tool.name} requires a task-augmented call (taskSupport: 'required')`,
      );
    }
    if (!wantsTask) return this.calls.runInline(tool, args, ctx);
    const requestedTtl = isPlainObject(task) ? task.ttl : undefined;
    if (requestedTtl !== undefined && requestedTtl !== null && (typeof requestedTtl !== 'number' || requestedTtl < 0)) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        'params.task.ttl must be a non-negative number of milliseconds or null',
      );
    }
    const record = await this.calls.startTask(tool, args, ctx, params, requestedTtl as number | null | undefined);
    return { task: toTask2025(record) };
  }

  async getTask(params: Params, caller: Caller): Promise<Task2025> {
    return toTask2025(await asRpc(() => this.calls.engine.get(caller, requireTaskId(params))));
  }

  /**
   * Blocks until the task is terminal, then answers exactly what the original call would have:
   * the result (with related-task `_meta`) or the same JSON-RPC error. Meanwhile every
   * question the task asks goes to the client as `elicitation/create` on this response's stream,
   * and the answers go back to the task (docs/design/protocol-rules.md §4.6). With the session's
   * `ledger`, a question the session has out on another channel is not asked twice.
   */
  async getTaskResult(
    params: Params,
    caller: Caller,
    signal: AbortSignal,
    elicit?: Elicit,
    ledger?: QuestionLedger,
  ): Promise<Record<string, unknown>> {
    const taskId = requireTaskId(params);
    const record = await asRpc(() =>
      elicit
        ? relayQuestionsUntilDone(
            this.calls,
            caller,
            taskId,
            signal,
            (params, timeoutMs, signal) => elicit(withRelatedTask(params, taskId), timeoutMs, signal),
            ledger ? { ledger } : {},
          )
        : this.calls.engine.waitForTerminal(caller, taskId, signal),
    );
    const outcome = record.outcome;
    if (outcome) this.calls.engine.resultRead(caller, record);
    if (outcome?.kind === 'error')
      throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    if (!outcome) {
      // Cancelled: there is no result to replay, and the spec leaves the answer open.
      throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, `Task ${taskId} was cancelled and has no result`, {
        taskId,
        status: record.status,
      });
    }
    const meta = isPlainObject(outcome.result._meta) ? outcome.result._meta : {};
    return { ...outcome.result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  async listTasks(params: Params, caller: Caller): Promise<{ tasks: Task2025[]; nextCursor?: string }> {
    const page = await asRpc(() => this.calls.engine.list(caller, optionalCursor(params)));
    return { tasks: page.tasks.map(toTask2025), ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
  }

  /** Moves the task to `cancelled` before answering; a terminal task is `-32602` (docs/design/protocol-rules.md §4.8). */
  async cancelTask(params: Params, caller: Caller): Promise<Task2025> {
    return toTask2025(await asRpc(() => this.calls.engine.cancel(caller, requireTaskId(params))));
  }
}
