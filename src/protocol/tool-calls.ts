/**
 * What both dialects do with a `tools/call`, apart from how they phrase the answer: find the
 * tool, validate the arguments before anything is created, then start a task or run inline.
 */

import type { Caller, TaskEngine } from '../engine/engine.js';
import { isTaskPaused, TaskPaused } from '../engine/errors.js';
import type { AnswerOutcome } from '../engine/inputs.js';
import { jsonBytes } from '../engine/sizes.js';
import type { InputAnswer, PendingInput, TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { TaskProgress } from '../tools/context.js';
import type { TaskToolDefinition } from '../tools/definition.js';
import { type LogListener, pendingQuestion, type ToolRegistry } from '../tools/registry.js';
import { toolVersionOf } from '../tools/version.js';
import { idempotencyKeyOf, isPlainObject, type Params, requestedPriorityOf, toolName } from './params.js';
import { asRpc, toJsonRpcError } from './rpc-error.js';

export interface CallContext {
  readonly caller: Caller;
  /** Aborted when the client cancels the request or disconnects. */
  readonly signal: AbortSignal;
  readonly onProgress?: (update: TaskProgress) => void;
  /** Hears the `ctx.log` lines of an inline run (the host sends them to the client when it asked). */
  readonly onLog?: LogListener;
  /**
   * The capabilities the client declared: on 2025-11-25 for its session, on 2026-07-28 in this
   * request's `_meta`. Absent where nothing was declared.
   */
  readonly clientCapabilities?: unknown;
  /** The `Idempotency-Key` header of the HTTP request that carried the call, as the host read it. */
  readonly idempotencyKeyHeader?: string;
  /** How an inline run asks its caller (2025-11-25: an elicitation on the request's stream). */
  readonly ask?: (key: string, pending: PendingInput) => Promise<InputAnswer>;
}

/** One round of an inline call that may ask: its result, or the questions to carry back (2026 MRTR). */
export type InlineRound =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | {
      readonly kind: 'input_required';
      readonly requests: Readonly<Record<string, PendingInput>>;
      /** What the next round needs so nothing before the questions runs again. */
      readonly carry: { steps: Record<string, unknown>; answers: Record<string, InputAnswer> };
    };

/** Steps and answers an earlier round of the same call carried over. */
export interface CarriedRounds {
  readonly steps: Readonly<Record<string, unknown>>;
  readonly answers: Readonly<Record<string, InputAnswer>>;
}

/** Size bounds on what a call hands over to be stored. */
export interface CallSizeLimits {
  /** Tool arguments, serialized after validation (default 1 MiB). */
  readonly maxArgumentBytes: number;
  /** One answer to one question, serialized (default 64 KiB). */
  readonly maxAnswerBytes: number;
}

export const DEFAULT_CALL_SIZE_LIMITS: CallSizeLimits = { maxArgumentBytes: 1024 * 1024, maxAnswerBytes: 64 * 1024 };

export class ToolCalls {
  private readonly sizes: CallSizeLimits;

  constructor(
    readonly engine: TaskEngine,
    readonly registry: ToolRegistry,
    sizes: Partial<CallSizeLimits> = {},
  ) {
    this.sizes = { ...DEFAULT_CALL_SIZE_LIMITS, ...sizes };
  }

  /**
   * The tool named in `params`, and its arguments as validated: unknown keys stripped and
   * defaults filled in, in their JSON form (what a task stores and a run parses again). Throws
   * -32602 when they do not fit the schema or are bigger than `maxArgumentBytes`.
   */
  resolve(params: Params): { tool: TaskToolDefinition; args: unknown } {
    let tool: TaskToolDefinition;
    let json: string;
    try {
      tool = this.registry.get(toolName(params));
      json = JSON.stringify(this.registry.parseArguments(tool, params?.arguments ?? {})) ?? '{}';
    } catch (error) {
      throw toJsonRpcError(error);
    }
    this.checkArgumentSize(tool.name, json);
    return { tool, args: JSON.parse(json) };
  }

  /** Throws -32602 when a tool's arguments, as JSON, are bigger than `maxArgumentBytes`. */
  checkArgumentSize(toolName: string, json: string): void {
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > this.sizes.maxArgumentBytes) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        `The arguments of ${toolName} are ${bytes} bytes, over the ${this.sizes.maxArgumentBytes}-byte limit (maxArgumentBytes)`,
        { limit: 'maxArgumentBytes', value: this.sizes.maxArgumentBytes },
      );
    }
  }

  /**
   * Refuses the call when the tool needs a client capability the caller did not declare
   * (`-32021`, `data.requiredCapabilities` naming each missing one as in `ClientCapabilities`).
   */
  checkClientCapabilities(tool: TaskToolDefinition, declared: unknown): void {
    const missing = (tool.requiresClientCapabilities ?? []).filter(
      (name) => !isPlainObject(declared) || declared[name] === undefined || declared[name] === null,
    );
    if (missing.length === 0) return;
    throw new JsonRpcError(
      JsonRpcErrorCode.MissingRequiredClientCapability,
      `Missing required client capability: tool ${tool.name} needs ${missing.map((name) => `'${name}'`).join(', ')}, which the client did not declare`,
      { requiredCapabilities: Object.fromEntries(missing.map((name) => [name, {}])) },
    );
  }

  /** Refuses the whole request if any answer in it is bigger than `maxAnswerBytes`. */
  private checkAnswerSizes(answers: Readonly<Record<string, unknown>>): void {
    for (const [key, answer] of Object.entries(answers)) {
      const bytes = jsonBytes(answer);
      if (bytes > this.sizes.maxAnswerBytes) {
        throw new JsonRpcError(
          JsonRpcErrorCode.InvalidParams,
          `The answer to '${key}' is ${bytes} bytes, over the ${this.sizes.maxAnswerBytes}-byte limit (maxAnswerBytes)`,
          { limit: 'maxAnswerBytes', value: this.sizes.maxAnswerBytes },
        );
      }
    }
  }

  /**
   * Creates the call's task. `params` carries its idempotency key, if any, in `_meta` (else the
   * host's `Idempotency-Key` header counts): a repeat returns the first call's task.
   */
  async startTask(
    tool: TaskToolDefinition,
    args: unknown,
    ctx: CallContext,
    params: Params,
    requestedTtlMs?: number | null,
    inputAnswers?: Readonly<Record<string, InputAnswer>>,
  ): Promise<TaskRecord> {
    const idempotencyKey = idempotencyKeyOf(params, ctx.idempotencyKeyHeader);
    return asRpc(() =>
      this.engine.create(ctx.caller, {
        tool: tool.name,
        args,
        ...(idempotencyKey !== undefined && { idempotencyKey }),
        ...(tool.idempotent === true && { idempotent: true }),
        ...priorityRequest(tool, params),
        toolVersion: toolVersionOf(tool),
        ...(requestedTtlMs !== undefined && { requestedTtlMs }),
        ...(inputAnswers && { inputAnswers }),
        ...(tool.ttlMs !== undefined && { toolTtlMs: tool.ttlMs }),
        ...(tool.pollIntervalMs !== undefined && { toolPollIntervalMs: tool.pollIntervalMs }),
      }),
    );
  }

  /** Runs the tool in this request and returns its `CallToolResult`, or throws its JSON-RPC error. */
  async runInline(
    tool: TaskToolDefinition,
    args: unknown,
    ctx: CallContext & { step?: <T>(name: string, run: () => Promise<T>) => Promise<T> },
  ): Promise<Record<string, unknown>> {
    const outcome = await this.registry.runInline(tool, args, {
      signal: ctx.signal,
      ...(ctx.onProgress && { onProgress: ctx.onProgress }),
      ...(ctx.onLog && { onLog: ctx.onLog }),
      ...(ctx.ask && { ask: ctx.ask }),
      ...(ctx.step && { step: ctx.step }),
    });
    if (outcome.kind === 'error') throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    return { ...outcome.result };
  }

  /**
   * An inline run that asks questions by returning them to the client (multi-round-trip
   * requests, 2026-07-28): answers the retried call carries are replayed; the first question
   * without an answer ends this round with everything asked so far.
   */
  async runInlineAsking(
    tool: TaskToolDefinition,
    args: unknown,
    ctx: CallContext,
    answers: Readonly<Record<string, unknown>>,
    carried: CarriedRounds = { steps: {}, answers: {} },
  ): Promise<InlineRound> {
    this.checkAnswerSizes(answers);
    const asked: Record<string, PendingInput> = {};
    const taken: Record<string, InputAnswer> = { ...carried.answers };
    const steps: Record<string, unknown> = { ...carried.steps };
    const ask = async (key: string, pending: PendingInput): Promise<InputAnswer> => {
      // An answer of an earlier round was checked then; one given now is checked here.
      const earlier = carried.answers[key];
      if (earlier) return earlier;
      const given = answers[key];
      const problem = given === undefined ? 'unanswered' : this.checkInlineAnswer(tool.name, pending, given);
      if (problem === undefined) {
        taken[key] = given as InputAnswer;
        return given as InputAnswer;
      }
      asked[key] = pending;
      throw new TaskPaused([key]);
    };
    // A step's result is kept for the rounds after this one (see `InlineState`), like a task's.
    const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      if (name in steps) return steps[name] as T;
      const value = await run();
      steps[name] = value === undefined ? null : value;
      return value;
    };
    try {
      return { kind: 'result', result: await this.runInline(tool, args, { ...ctx, ask, step }) };
    } catch (error) {
      if (isTaskPaused(error) && Object.keys(asked).length > 0) {
        return { kind: 'input_required', requests: asked, carry: { steps, answers: taken } };
      }
      throw error;
    }
  }

  /**
   * The tool's upfront questions (asked on the call, before the task exists) against the
   * answers this call carries: the valid answers, and the questions still to ask.
   */
  upfrontRound(
    tool: TaskToolDefinition,
    answers: Readonly<Record<string, unknown>>,
  ): { answers: Record<string, InputAnswer>; missing: Record<string, PendingInput> } {
    this.checkAnswerSizes(answers);
    const taken: Record<string, InputAnswer> = {};
    const missing: Record<string, PendingInput> = {};
    for (const question of tool.questions ?? []) {
      if (!question.upfront) continue;
      const pending = pendingQuestion(question);
      const given = answers[question.name];
      if (given !== undefined && this.checkInlineAnswer(tool.name, pending, given) === undefined) {
        taken[question.name] = given as InputAnswer;
      } else {
        missing[question.name] = pending;
      }
    }
    return { answers: taken, missing };
  }

  /** Delivers answers to a task's questions; see `TaskEngine.answer`. */
  async answer(caller: Caller, taskId: string, responses: Readonly<Record<string, unknown>>): Promise<AnswerOutcome> {
    this.checkAnswerSizes(responses);
    return asRpc(() =>
      this.engine.answer(caller, taskId, responses, (pending, answer, record) =>
        this.registry.checkAnswer(record.tool, pending, answer),
      ),
    );
  }

  private checkInlineAnswer(toolName: string, pending: PendingInput, given: unknown): string | undefined {
    const action = (given as { action?: unknown } | null)?.action;
    if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return 'not an answer';
    return this.registry.checkAnswer(toolName, pending, given as InputAnswer);
  }
}

/** The priority fields of a create: the tool's, and the call's own when the tool allows it. */
export function priorityRequest(
  tool: TaskToolDefinition,
  params: Params,
): { toolPriority?: number; requestedPriority?: unknown; priorityFromCall?: boolean } {
  const requested = tool.priorityFromCall === true ? requestedPriorityOf(params) : undefined;
  return {
    ...(tool.priority !== undefined && { toolPriority: tool.priority }),
    ...(requested !== undefined && { requestedPriority: requested, priorityFromCall: true }),
  };
}

/**
 * What `tools/list` shows of a tool; 2025-11-25 adds `execution`. Clients and models lean on the
 * description, so a method without JSDoc still gets one, from its title or name.
 */
export function describeTool(tool: TaskToolDefinition): Record<string, unknown> {
  return {
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description ?? tool.title ?? tool.name.replaceAll('_', ' '),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined && { outputSchema: tool.outputSchema }),
  };
}
