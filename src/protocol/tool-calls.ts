/**
 * What both dialects do with a `tools/call`, apart from how they phrase the answer: find the
 * tool, validate the arguments before anything is created, then start a task or run inline.
 */
import type { Caller, TaskEngine } from '../engine/engine.js';
import type { TaskRecord } from '../engine/task.js';
import type { TaskProgress } from '../tools/context.js';
import type { TaskToolDefinition } from '../tools/definition.js';
import type { ToolRegistry } from '../tools/registry.js';
import { type Params, toolName } from './params.js';
import { RpcError, toRpcError } from './rpc-error.js';

export interface CallContext {
  readonly caller: Caller;
  /** Aborted when the client cancels the request or disconnects. */
  readonly signal: AbortSignal;
  readonly onProgress?: (update: TaskProgress) => void;
}

export class ToolCalls {
  constructor(
    readonly engine: TaskEngine,
    readonly registry: ToolRegistry,
  ) {}

  /** The tool named in `params`, with its arguments validated (throws -32602 otherwise). */
  resolve(params: Params): { tool: TaskToolDefinition; args: unknown } {
    try {
      const tool = this.registry.get(toolName(params));
      const args = params?.arguments ?? {};
      this.registry.parseArguments(tool, args);
      return { tool, args };
    } catch (error) {
      throw toRpcError(error);
    }
  }

  async startTask(
    tool: TaskToolDefinition,
    args: unknown,
    ctx: CallContext,
    requestedTtlMs?: number | null,
  ): Promise<TaskRecord> {
    try {
      return await this.engine.create(ctx.caller, {
        tool: tool.name,
        args,
        ...(requestedTtlMs !== undefined && { requestedTtlMs }),
        ...(tool.ttlMs !== undefined && { toolTtlMs: tool.ttlMs }),
        ...(tool.pollIntervalMs !== undefined && { toolPollIntervalMs: tool.pollIntervalMs }),
      });
    } catch (error) {
      throw toRpcError(error);
    }
  }

  /** Runs the tool in this request and returns its `CallToolResult`, or throws its JSON-RPC error. */
  async runInline(tool: TaskToolDefinition, args: unknown, ctx: CallContext): Promise<Record<string, unknown>> {
    const outcome = await this.registry.runInline(tool, args, {
      signal: ctx.signal,
      ...(ctx.onProgress && { onProgress: ctx.onProgress }),
    });
    if (outcome.kind === 'error') throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    return { ...outcome.result };
  }
}

/** What `tools/list` shows of a tool; dialect B adds `execution`. */
export function describeTool(tool: TaskToolDefinition): Record<string, unknown> {
  return {
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    ...(tool.description !== undefined && { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined && { outputSchema: tool.outputSchema }),
  };
}
