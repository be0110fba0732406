/**
 * Dialect B: core tasks of protocol 2025-11-25 (`capabilities.tasks`, `params.task`,
 * `{ task }` results, blocking `tasks/result`). What VS Code, Inspector and the v1 SDK speak.
 * Spec digest: shared/docs/protocol.md §4.
 */
import type { Caller } from '../engine/engine.js';
import { expiresAt, isTerminal, type PendingInput, type TaskRecord, type TaskStatus } from '../engine/task.js';
import { isPlainObject, optionalCursor, type Params, requireTaskId } from './params.js';
import { ErrorCode, RpcError, toRpcError } from './rpc-error.js';
import { type CallContext, describeTool, type ToolCalls } from './tool-calls.js';

export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** Sends `elicitation/create` to the client and resolves with its `ElicitResult`. */
export type Elicit = (params: Record<string, unknown>, timeoutMs: number) => Promise<unknown>;

/** The 2025-11-25 `Task` object. */
export interface TaskB {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

export function toTaskB(record: TaskRecord): TaskB {
  return {
    taskId: record.taskId,
    status: statusB(record),
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttl: record.ttlMs,
    pollInterval: record.pollIntervalMs,
  };
}

/** In B a tool result with `isError: true` fails the task (§4.4); the record calls it completed. */
export function statusB(record: TaskRecord): TaskStatus {
  return record.status === 'completed' && record.outcome?.kind === 'result' && record.outcome.isError
    ? 'failed'
    : record.status;
}

export function serverCapabilitiesB(options: { list: boolean }): Record<string, unknown> {
  return {
    tools: {},
    tasks: { ...(options.list && { list: {} }), cancel: {}, requests: { tools: { call: {} } } },
  };
}

export class DialectB {
  constructor(private readonly calls: ToolCalls) {}

  listTools(): { tools: Record<string, unknown>[] } {
    return {
      tools: this.calls.registry.list().map((tool) => ({
        ...describeTool(tool),
        execution: { taskSupport: tool.taskSupport },
      })),
    };
  }

  /** `tools/call`, with or without `params.task` (§4.2, §4.3). */
  async callTool(params: Params, ctx: CallContext): Promise<Record<string, unknown>> {
    const { tool, args } = this.calls.resolve(params);
    const task = params?.task;
    const wantsTask = task !== undefined && task !== null;
    if (wantsTask && tool.taskSupport === 'forbidden') {
      throw new RpcError(
        ErrorCode.MethodNotFound,
        `Tool ${tool.name} does not support task-augmented calls (taskSupport: 'forbidden')`,
      );
    }
    if (!wantsTask && tool.taskSupport === 'required') {
      throw new RpcError(
        ErrorCode.MethodNotFound,
        `Tool ${tool.name} requires a task-augmented call (taskSupport: 'required')`,
      );
    }
    if (!wantsTask) return this.calls.runInline(tool, args, ctx);
    const requestedTtl = isPlainObject(task) ? task.ttl : undefined;
    if (requestedTtl !== undefined && requestedTtl !== null && (typeof requestedTtl !== 'number' || requestedTtl < 0)) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        'params.task.ttl must be a non-negative number of milliseconds or null',
      );
    }
    const record = await this.calls.startTask(tool, args, ctx, requestedTtl as number | null | undefined);
    return { task: toTaskB(record) };
  }

  async getTask(params: Params, caller: Caller): Promise<TaskB> {
    return toTaskB(await this.read(() => this.calls.engine.get(caller, requireTaskId(params))));
  }

  /**
   * Blocks until the task is terminal, then answers exactly what the original call would have:
   * the result (with related-task `_meta`) or the same JSON-RPC error (§4.6). Meanwhile every
   * question the task asks goes to the client as `elicitation/create` on this response's stream,
   * and the answers go back to the task (§4.6 `input_required` mechanics).
   */
  async getTaskResult(
    params: Params,
    caller: Caller,
    signal: AbortSignal,
    elicit?: Elicit,
  ): Promise<Record<string, unknown>> {
    const taskId = requireTaskId(params);
    const record = await this.read(() =>
      elicit
        ? this.relayQuestionsUntilDone(caller, taskId, signal, elicit)
        : this.calls.engine.waitForTerminal(caller, taskId, signal),
    );
    const outcome = record.outcome;
    if (outcome?.kind === 'error') throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    if (!outcome) {
      // Cancelled: there is no result to replay, and the spec leaves the answer open.
      throw new RpcError(ErrorCode.InvalidParams, `Task ${taskId} was cancelled and has no result`, {
        taskId,
        status: record.status,
      });
    }
    const meta = isPlainObject(outcome.result._meta) ? outcome.result._meta : {};
    return { ...outcome.result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  /**
   * Waits for the task to end, sending each new question on the way. A question is sent once
   * per stream; an answer the task refused (invalid) makes it outstanding again, and it is
   * asked again. If the client fails to answer, this call fails with that reason; the task
   * keeps waiting, and a new `tasks/result` asks again.
   */
  private async relayQuestionsUntilDone(
    caller: Caller,
    taskId: string,
    signal: AbortSignal,
    elicit: Elicit,
  ): Promise<TaskRecord> {
    const sent = new Set<string>();
    const broken = new AbortController();
    // Wakes the wait below when a refused answer makes a sent question askable again.
    let nudge = () => {};
    const unsent = (record: TaskRecord) => Object.keys(record.inputRequests ?? {}).filter((key) => !sent.has(key));
    for (;;) {
      const round = new AbortController();
      nudge = () => round.abort();
      let record: TaskRecord;
      try {
        record = await this.calls.engine.waitFor(
          caller,
          taskId,
          (current) => isTerminal(current.status) || unsent(current).length > 0,
          AbortSignal.any([signal, broken.signal, round.signal]),
        );
      } catch (error) {
        if (signal.aborted) throw error;
        if (broken.signal.aborted) throw broken.signal.reason;
        if (round.signal.aborted) continue;
        throw error;
      }
      if (isTerminal(record.status)) return record;
      for (const key of unsent(record)) {
        sent.add(key);
        const pending = record.inputRequests?.[key] as PendingInput;
        const timeoutMs = Math.max(1000, expiresAt(record) - Date.now());
        elicit({ ...pending.params, _meta: { [RELATED_TASK_META_KEY]: { taskId } } }, timeoutMs)
          .then((response) => this.calls.answer(caller, taskId, { [key]: response }))
          .then(
            (outcome) => {
              if (!outcome.rejected[key]) return;
              sent.delete(key);
              nudge();
            },
            (error: unknown) => {
              sent.delete(key);
              broken.abort(
                new RpcError(
                  ErrorCode.InternalError,
                  `The client did not answer the task's question '${key}': ${error instanceof Error ? error.message : String(error)}`,
                ),
              );
            },
          );
      }
    }
  }

  async listTasks(params: Params, caller: Caller): Promise<{ tasks: TaskB[]; nextCursor?: string }> {
    const page = await this.read(() => this.calls.engine.list(caller, optionalCursor(params)));
    return { tasks: page.tasks.map(toTaskB), ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
  }

  /** Moves the task to `cancelled` before answering; a terminal task is `-32602` (§4.8). */
  async cancelTask(params: Params, caller: Caller): Promise<TaskB> {
    return toTaskB(await this.read(() => this.calls.engine.cancel(caller, requireTaskId(params))));
  }

  /** Runs an engine call, turning its errors into JSON-RPC errors. */
  async read<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toRpcError(error);
    }
  }
}
