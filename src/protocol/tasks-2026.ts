/**
 * The `io.modelcontextprotocol/tasks` extension on protocol 2026-07-28. Stateless;
 * the client declares the extension on every request; flat `resultType: "task"` results;
 * `tasks/get` inlines the result or error. Its rules and their tests: docs/traceability.md, rows C-*.
 */
import { TaskError } from '../engine/errors.js';
import { isTerminal, type PendingInput, type TaskRecord, type TaskStatus } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { carriedState, type InlineStateCodec, newInlineState } from './inline-state.js';
import { isPlainObject, type Params, requireTaskId } from './params.js';
import { relatedTasksMeta } from './related-tasks.js';
import { asRpc, toJsonRpcError } from './rpc-error.js';
import { type CallContext, describeTool, type ToolCalls } from './tool-calls.js';

export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

export interface Task2026 {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** On a child task (`ctx.spawn`): `{ "io.modelcontextprotocol/relatedTaskIds": [parentId] }`. */
  _meta?: Record<string, unknown>;
}

/** The `DetailedTask` of `tasks/get` and `notifications/tasks`: the task plus what it produced. */
export type DetailedTask2026 = Task2026 & {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  inputRequests?: Record<string, unknown>;
};

export function toTask2026(record: TaskRecord): Task2026 {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
    ...relatedTasksMeta(record),
  };
}

export function toDetailedTask2026(record: TaskRecord): DetailedTask2026 {
  const task: DetailedTask2026 = toTask2026(record);
  // The result as the call itself would have answered on 2026-07-28, where every result carries
  // `resultType` (strict clients, such as ext-tasks 0.2.2, validate it as a CallToolResult).
  if (record.status === 'completed' && record.outcome?.kind === 'result') {
    task.result = { ...record.outcome.result, resultType: 'complete' };
  }
  if (record.status === 'failed' && record.outcome?.kind === 'error') task.error = { ...record.outcome.error };
  if (record.status === 'input_required') task.inputRequests = toInputRequests(record.inputRequests ?? {});
  return task;
}

/** Outstanding questions as the `InputRequests` map of 2026-07-28: `{ key: { method, params } }`. */
export function toInputRequests(pending: Readonly<Record<string, PendingInput>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(pending).map(([key, input]) => [key, { method: 'elicitation/create', params: { ...input.params } }]),
  );
}

export function serverCapabilities2026(): Record<string, unknown> {
  return { tools: {}, extensions: { [TASKS_EXTENSION_ID]: {} } };
}

/** Whether this request's `_meta` declares the tasks extension (per request, never inferred: docs/design/protocol-rules.md §5.2). */
export function declaresTasksExtension(clientCapabilities: unknown): boolean {
  return isPlainObject(clientCapabilities) && isPlainObject(clientCapabilities.extensions)
    ? clientCapabilities.extensions[TASKS_EXTENSION_ID] !== undefined
    : false;
}

export function missingTasksExtension(what: string): JsonRpcError {
  return new JsonRpcError(
    JsonRpcErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION_ID} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
  );
}

export interface Tasks2026CallContext extends CallContext {
  /** Whether the request's client capabilities declare the tasks extension. */
  readonly tasksExtension: boolean;
  /** Answers a retried request carries (`inputResponses`, lifted by the SDK). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** The verified `requestState` a retried request carries back, if any (see `InlineState`). */
  readonly requestState?: unknown;
  /** Seals the state the next round needs; absent where no server key is configured. */
  readonly inlineState?: InlineStateCodec;
}

export class Tasks2026Dialect {
  constructor(private readonly calls: ToolCalls) {}

  listTools(): { tools: Record<string, unknown>[] } {
    return { tools: this.calls.registry.list().map(describeTool) };
  }

  /**
   * The server decides: a task tool called by a client that declared the extension becomes a
   * task; without the extension it runs inline, unless it can only run as a task (`-32021`).
   * A legacy `params.task` is ignored (docs/design/protocol-rules.md §2.1).
   */
  async callTool(params: Params, ctx: Tasks2026CallContext): Promise<Record<string, unknown>> {
    const { tool, args } = this.calls.resolve(params);
    this.calls.checkClientCapabilities(tool, ctx.clientCapabilities);
    if (tool.taskSupport === 'required' && !ctx.tasksExtension) throw missingTasksExtension(`tool ${tool.name}`);
    if (tool.taskSupport === 'forbidden' || !ctx.tasksExtension) {
      // Inline questions travel as multi-round-trip requests: the client retries with answers,
      // and the sealed request state brings back the steps and answers of earlier rounds.
      const carried = carriedState(ctx.requestState, tool.name, args, ctx.caller);
      const round = await this.calls.runInlineAsking(tool, args, ctx, ctx.inputResponses ?? {}, carried);
      if (round.kind === 'result') return round.result;
      const state =
        ctx.inlineState &&
        (await ctx.inlineState.seal(
          newInlineState(tool.name, args, ctx.caller, round.carry.steps, round.carry.answers),
        ));
      return {
        resultType: 'input_required',
        inputRequests: toInputRequests(round.requests),
        ...(state !== undefined && { requestState: state }),
      };
    }
    // Questions the tool asks before it starts travel as a multi-round-trip round on this call.
    const upfront = this.calls.upfrontRound(tool, ctx.inputResponses ?? {});
    if (Object.keys(upfront.missing).length > 0) {
      return { resultType: 'input_required', inputRequests: toInputRequests(upfront.missing) };
    }
    const answered = Object.keys(upfront.answers).length > 0 ? upfront.answers : undefined;
    const record = await this.calls.startTask(tool, args, ctx, params, undefined, answered);
    return { resultType: 'task', ...toTask2026(record) };
  }

  async getTask(params: Params, ctx: Tasks2026CallContext): Promise<DetailedTask2026 & { resultType: 'complete' }> {
    // The capability gate comes before the lookup, so an unknown id without it is still -32021.
    if (!ctx.tasksExtension) throw missingTasksExtension('tasks/get');
    const record = await asRpc(() => this.calls.engine.get(ctx.caller, requireTaskId(params)));
    const detailed = toDetailedTask2026(record);
    if (detailed.result || detailed.error) this.calls.engine.resultRead(ctx.caller, record);
    return { resultType: 'complete', ...detailed };
  }

  /** Cooperative cancel: an empty ack, also for a task that already ended (docs/design/protocol-rules.md §5.6). */
  async cancelTask(params: Params, ctx: Tasks2026CallContext): Promise<{ resultType: 'complete' }> {
    if (!ctx.tasksExtension) throw missingTasksExtension('tasks/cancel');
    const taskId = requireTaskId(params);
    const record = await asRpc(() => this.calls.engine.get(ctx.caller, taskId));
    if (!isTerminal(record.status)) {
      try {
        await this.calls.engine.cancel(ctx.caller, taskId);
      } catch (error) {
        // It ended between the read and the cancel: still an ack.
        if (!(error instanceof TaskError && error.code === 'TASK_TERMINAL')) throw toJsonRpcError(error);
      }
    }
    return { resultType: 'complete' };
  }

  /**
   * Answers to a task's input requests (docs/design/protocol-rules.md §5.5). The answers are applied before the ack, so the
   * next `tasks/get` already shows them; keys that are not outstanding are ignored, and an
   * invalid answer leaves its question open with the reason in `statusMessage`.
   */
  async updateTask(
    params: Params,
    ctx: Tasks2026CallContext,
    inputResponses: unknown,
  ): Promise<{ resultType: 'complete' }> {
    if (!ctx.tasksExtension) throw missingTasksExtension('tasks/update');
    const taskId = requireTaskId(params);
    if (inputResponses !== undefined && !isPlainObject(inputResponses)) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        'params.inputResponses must be an object keyed by input request',
      );
    }
    await this.calls.answer(ctx.caller, taskId, inputResponses ?? {});
    return { resultType: 'complete' };
  }
}
