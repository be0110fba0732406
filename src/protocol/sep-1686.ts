/**
 * The original SEP-1686 `_meta` form (historical), served only when the app opts in.
 * The client names the task in `_meta["modelcontextprotocol.io/task"]` on an ordinary
 * `tools/call`; the call itself answers when the task ends, `notifications/tasks/created`
 * announces it, and `tasks/get|result|list|delete` use SEP-1686's fields. Its rules, each
 * with the tests that cover it: docs/traceability.md, rows A-*.
 */

import { type Caller, clientTaskKey } from '../engine/engine.js';
import { TaskError } from '../engine/errors.js';
import { isTerminal, type TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { toolVersionOf } from '../tools/version.js';
import { idempotencyKeyOf, isPlainObject, optionalCursor, type Params, requireTaskId } from './params.js';
import { type Elicit, relayQuestionsUntilDone } from './question-relay.js';
import { asRpc, toJsonRpcError } from './rpc-error.js';
import { type CallContext, priorityRequest, type ToolCalls } from './tool-calls.js';

export const SEP1686_TASK_META_KEY = 'modelcontextprotocol.io/task';
export const SEP1686_RELATED_TASK_META_KEY = 'modelcontextprotocol.io/related-task';

export type Sep1686Status =
  | 'submitted'
  | 'working'
  | 'input_required'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'unknown';

export interface Sep1686Task {
  taskId: string;
  status: Sep1686Status;
  /** Retention after the task ends, in ms; `null` when none was asked for. */
  keepAlive: number | null;
  pollFrequency?: number;
  error?: string;
}

/** Client-chosen ids become Redis keys and BullMQ job ids: a safe, bounded alphabet. */
const CLIENT_TASK_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** The SEP-1686 task request of a `tools/call`, if it carries one. */
export function readSep1686TaskRequest(params: Params): { taskId: string; keepAlive?: number } | undefined {
  const meta = params?._meta;
  if (!isPlainObject(meta) || meta[SEP1686_TASK_META_KEY] === undefined) return undefined;
  const request = meta[SEP1686_TASK_META_KEY];
  if (!isPlainObject(request) || typeof request.taskId !== 'string' || !CLIENT_TASK_ID.test(request.taskId)) {
    throw new JsonRpcError(
      JsonRpcErrorCode.InvalidParams,
      `_meta["${SEP1686_TASK_META_KEY}"].taskId must be 1 to 128 letters, digits, '_', '-' or '.'`,
    );
  }
  const keepAlive = request.keepAlive;
  if (keepAlive !== undefined && keepAlive !== null && (typeof keepAlive !== 'number' || keepAlive < 0)) {
    throw new JsonRpcError(
      JsonRpcErrorCode.InvalidParams,
      `_meta["${SEP1686_TASK_META_KEY}"].keepAlive must be milliseconds`,
    );
  }
  return { taskId: request.taskId, ...(typeof keepAlive === 'number' && { keepAlive }) };
}

/** Whether a record was created through this dialect, and so answers in its fields. */
export function isSep1686Task(record: TaskRecord): boolean {
  return record.keepAliveMs !== undefined;
}

/** The id the client knows the task by: the one it chose, not where it is stored. */
export function clientIdOf(record: TaskRecord): string {
  return record.clientTaskId ?? record.taskId;
}

export function toSep1686Task(record: TaskRecord): Sep1686Task {
  return {
    taskId: clientIdOf(record),
    // Nothing has happened to it yet: A calls that "submitted".
    status: record.status === 'working' && record.lastUpdatedAt === record.createdAt ? 'submitted' : record.status,
    keepAlive: record.keepAliveMs ?? null,
    pollFrequency: record.pollIntervalMs,
    ...(record.status === 'failed' && record.outcome?.kind === 'error' && { error: record.outcome.error.message }),
  };
}

function related(taskId: string): Record<string, unknown> {
  return { [SEP1686_RELATED_TASK_META_KEY]: { taskId } };
}

export interface Sep1686CallContext extends CallContext {
  /**
   * Aborts when the request that carries the call is gone (the client hung up). It ends the
   * wait, not the task: only a cancel (`signal`) cancels it, and the client may come back for it
   * by its id.
   */
  readonly hangup?: AbortSignal;
  /** Sends `notifications/tasks/created` for the new task (on the call's own stream). */
  readonly announce: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>;
  /** Asks the client on the call's own stream, when it can answer forms. */
  readonly elicit?: Elicit;
}

export class Sep1686Dialect {
  constructor(private readonly calls: ToolCalls) {}

  /**
   * A `tools/call` that asked for a task: the task is created under the client's id and
   * announced, and this call answers with the task's result once it ends. The client cancels
   * it with `notifications/cancelled` for this call, which cancels the task.
   */
  async callTool(
    params: Params,
    taskRequest: { taskId: string; keepAlive?: number },
    ctx: Sep1686CallContext,
  ): Promise<Record<string, unknown>> {
    const { tool, args } = this.calls.resolve(params);
    this.calls.checkClientCapabilities(tool, ctx.clientCapabilities);
    // A tool that never runs as a task is processed normally, as a receiver without tasks would.
    if (tool.taskSupport === 'forbidden') return this.calls.runInline(tool, args, ctx);
    const idempotencyKey = idempotencyKeyOf(params, ctx.idempotencyKeyHeader);
    let record: TaskRecord;
    try {
      record = await this.calls.engine.createWithId(ctx.caller, taskRequest.taskId, {
        tool: tool.name,
        args,
        keepAliveMs: taskRequest.keepAlive ?? 0,
        ...(idempotencyKey !== undefined && { idempotencyKey }),
        ...(tool.idempotent === true && { idempotent: true }),
        ...priorityRequest(tool, params),
        toolVersion: toolVersionOf(tool),
        ...(tool.pollIntervalMs !== undefined && { toolPollIntervalMs: tool.pollIntervalMs }),
      });
    } catch (error) {
      if (error instanceof TaskError && error.code === 'DUPLICATE_TASK') {
        // Only the caller's own tasks share its namespace, so this tells nobody else's secret.
        throw new JsonRpcError(JsonRpcErrorCode.InvalidParams, `Task ID already exists: ${taskRequest.taskId}`);
      }
      throw toJsonRpcError(error);
    }
    const taskId = record.taskId;
    // A repeated idempotent call gets the first call's task, under the id that call chose.
    const clientTaskId = clientIdOf(record);
    await ctx
      .announce({ method: 'notifications/tasks/created', params: { _meta: related(clientTaskId) } })
      .catch(() => {});
    const onCancel = () => {
      this.calls.engine.cancel(ctx.caller, taskId).catch(() => {
        // Already ended: nothing to cancel.
      });
    };
    ctx.signal.addEventListener('abort', onCancel, { once: true });
    // The client may have cancelled while the task was being created and announced.
    if (ctx.signal.aborted) onCancel();
    // The wait ends with the call, whether cancelled or abandoned; the task ends only if cancelled.
    const waitSignal = ctx.hangup ? AbortSignal.any([ctx.signal, ctx.hangup]) : ctx.signal;
    try {
      // The task's questions go to the requestor on this call, tagged with SEP-1686's related-task key.
      const elicit = ctx.elicit;
      const done = await asRpc(() =>
        elicit
          ? relayQuestionsUntilDone(this.calls, ctx.caller, taskId, waitSignal, (params, timeoutMs, signal) =>
              elicit({ ...params, _meta: related(clientTaskId) }, timeoutMs, signal),
            )
          : this.calls.engine.waitForTerminal(ctx.caller, taskId, waitSignal),
      );
      return this.resultOf(done, ctx.caller);
    } finally {
      ctx.signal.removeEventListener('abort', onCancel);
    }
  }

  async getTask(params: Params, caller: Caller): Promise<Sep1686Task & { _meta: Record<string, unknown> }> {
    const record = await this.read(params, caller);
    return { ...toSep1686Task(record), _meta: related(clientIdOf(record)) };
  }

  /** The caller's task with the client-chosen id in `params.taskId`, if it has one. */
  async find(params: Params, caller: Caller): Promise<TaskRecord | undefined> {
    return this.calls.engine.get(caller, clientTaskKey(caller, requireTaskId(params))).catch(() => undefined);
  }

  private read(params: Params, caller: Caller): Promise<TaskRecord> {
    return asRpc(() => this.calls.engine.get(caller, clientTaskKey(caller, requireTaskId(params))));
  }

  /** The result, only once the task completed (otherwise -32602: docs/design/protocol-rules.md §3). */
  async getTaskResult(params: Params, caller: Caller): Promise<Record<string, unknown>> {
    const record = await this.read(params, caller);
    if (record.status !== 'completed') {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Cannot retrieve result: Task status is '${toSep1686Task(record).status}', not 'completed'`,
      );
    }
    return this.resultOf(record, caller);
  }

  async listTasks(params: Params, caller: Caller): Promise<{ tasks: Sep1686Task[]; nextCursor?: string }> {
    const page = await asRpc(() => this.calls.engine.list(caller, optionalCursor(params)));
    return {
      tasks: page.tasks.map(toSep1686Task),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    };
  }

  async deleteTask(params: Params, caller: Caller): Promise<Record<string, never>> {
    await asRpc(() => this.calls.engine.delete(caller, clientTaskKey(caller, requireTaskId(params))));
    return {};
  }

  private resultOf(record: TaskRecord, caller: Caller): Record<string, unknown> {
    const outcome = record.outcome;
    if (outcome) this.calls.engine.resultRead(caller, record);
    if (outcome?.kind === 'error')
      throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    if (!outcome || !isTerminal(record.status)) {
      throw new JsonRpcError(JsonRpcErrorCode.InternalError, `Task ${clientIdOf(record)} was ${record.status}`, {
        taskId: clientIdOf(record),
      });
    }
    const meta = isPlainObject(outcome.result._meta) ? outcome.result._meta : {};
    return { ...outcome.result, _meta: { ...meta, ...related(clientIdOf(record)) } };
  }
}
