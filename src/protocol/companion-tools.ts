/**
 * Task tools for callers that cannot receive a task: a 2025-11-25 session whose client declared
 * no `tasks` capability, or a 2026-07-28 request without the tasks extension. Such a caller
 * calls a task tool as a plain tool and gets a handle (an ordinary `CallToolResult` naming the
 * task) instead of a call that blocks for the task's whole life; it then follows the task with
 * the companion tools (`task_status`, `task_wait`, `task_result`, `task_answer`, `task_cancel`),
 * which are listed to such callers only. Everything here answers with plain tool results, so
 * any client (and a model driving it) can use it.
 */
import type { Caller } from '../engine/engine.js';
import { TaskError } from '../engine/errors.js';
import { isTerminal, type PendingInput, type TaskRecord, type TaskStatus } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { TaskToolDefinition } from '../tools/definition.js';
import { carriedState, type InlineState, newInlineState } from './inline-state.js';
import { isPlainObject, type Params, toolName } from './params.js';
import type { QuestionLedger } from './question-ledger.js';
import { type Elicit, INLINE_QUESTION_TIMEOUT_MS, relayQuestionsUntilDone } from './question-relay.js';
import { asRpc, toJsonRpcError } from './rpc-error.js';
import { status2025 } from './tasks-2025.js';
import { toInputRequests } from './tasks-2026.js';
import type { CallContext, ToolCalls } from './tool-calls.js';

/**
 * What a caller that cannot receive a task gets from a task tool:
 * - `auto`: the task starts and the call waits up to the grace time; a task that ends by then
 *   answers with its real result, as an inline call would, any other with the handle;
 * - `handle`: the handle at once;
 * - `inline`: the tool runs inside the call, for as long as it takes (the behaviour before
 *   handles existed).
 */
export type UnawareClientMode = 'auto' | 'handle' | 'inline';

export const UNAWARE_CLIENT_MODES: readonly UnawareClientMode[] = ['auto', 'handle', 'inline'];

/** How long an `auto` call waits for its task before answering with the handle. */
export const DEFAULT_UNAWARE_GRACE_MS = 10_000;

/**
 * The longest `task_wait`, and its default: well under the 60 s request timeout of the
 * TypeScript SDK's client and the shorter ones many hosts use, so a wait never gets cut off.
 */
export const TASK_WAIT_CAP_SECONDS = 25;

/** The companion tools' names are this prefix plus `status`, `wait`, `result`, `answer`, `cancel`. */
export const DEFAULT_COMPANION_PREFIX = 'task_';

/** Longest task id the companion tools accept (ours are 22 characters; SEP-1686 ids are longer). */
const MAX_TASK_ID_LENGTH = 1024;

/** Longest question key `task_answer` accepts. */
const MAX_QUESTION_KEY_LENGTH = 256;

export interface UnawareClientSettings {
  /**
   * The server-wide mode. Unset: `auto` for task-support `optional` tools, and `required` tools
   * keep refusing plain calls (`-32601` on 2025-11-25, `-32021` on 2026-07-28). Set to `auto` or
   * `handle`, it applies to `required` tools too. A tool's own `@Task({ unawareClients })` wins.
   */
  readonly mode?: UnawareClientMode;
  /** How long `auto` waits (default 10 000 ms). */
  readonly graceMs: number;
  /** Prefix of the companion tools' names (default `task_`). */
  readonly prefix: string;
}

/** The companion tools, by what they do. */
export type CompanionTool = 'status' | 'wait' | 'result' | 'answer' | 'cancel';

const COMPANION_TOOLS: readonly CompanionTool[] = ['status', 'wait', 'result', 'answer', 'cancel'];

/**
 * How a question the task asks while a call waits can reach a person:
 * - `none`: it cannot (the client declared no elicitation); it is described in the answer and
 *   answered through `task_answer`;
 * - `elicit`: 2025-11-25, an `elicitation/create` on the call's response stream;
 * - `rounds`: 2026-07-28, the call answers `input_required` and the client retries it with the
 *   answers (multi-round-trip requests).
 */
export type QuestionChannel =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'elicit';
      readonly elicit: Elicit;
      /** The session's ledger, so a question it has out on another channel is not asked twice. */
      readonly ledger?: QuestionLedger;
    }
  | { readonly kind: 'rounds' };

export interface UnawareCallContext extends CallContext {
  readonly questions: QuestionChannel;
  /** 2026-07-28: answers a retried call carries. */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** 2026-07-28: the verified state a retried call carries back (it names the task it started). */
  readonly requestState?: unknown;
  /** 2026-07-28: seals the state the next round needs; absent where no server key is configured. */
  readonly sealState?: (state: InlineState) => Promise<string>;
  /** Ends the waits of this call (the client cancelled or hung up); the task goes on. */
  readonly waitSignal?: AbortSignal;
  /**
   * Takes one of the caller's blocking-wait slots for the grace wait: its release, or
   * `undefined` when none is free (the call then answers with the handle at once). Absent:
   * grace waits are not counted.
   */
  readonly holdGraceWait?: () => (() => void) | undefined | Promise<(() => void) | undefined>;
}

/** One field a question needs, as `task_status` describes it to a model. */
export interface QuestionField {
  readonly name: string;
  /** JSON type: `string`, `number`, `integer` or `boolean`. */
  readonly type: string;
  readonly required: boolean;
  readonly description?: string;
  /** The only values the field takes (enums). */
  readonly allowed?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly format?: string;
  readonly default?: unknown;
}

/** A question the task waits on, as the companion tools describe it. */
export interface QuestionView {
  /** Pass this as `question` to `task_answer`. */
  readonly question: string;
  readonly message: string;
  readonly fields: readonly QuestionField[];
}

/**
 * The `structuredContent` of a handle and of `task_status`, `task_wait`, `task_answer` and
 * `task_cancel`. A handle is the same view of a task just started.
 */
export interface TaskStatusView {
  readonly taskId: string;
  /** A tool result with `isError: true` is reported `failed`, as on 2025-11-25. */
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** The latest numeric progress the task reported; `text` is "n of total" where known. */
  readonly progress?: { readonly progress: number; readonly total?: number; readonly text: string };
  /** The first question the task waits on, if any. */
  readonly question?: QuestionView;
  /** When to ask again, in seconds (or call `task_wait`, which returns as soon as it changes). */
  readonly pollAfterSeconds: number;
}

const FIELD_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    required: { type: 'boolean' },
    description: { type: 'string' },
    allowed: { type: 'array' },
    minimum: { type: 'number' },
    maximum: { type: 'number' },
    minLength: { type: 'number' },
    maxLength: { type: 'number' },
    format: { type: 'string' },
    default: {},
  },
  required: ['name', 'type', 'required'],
};

/** The JSON Schema of `TaskStatusView`: the handle, and the answer of most companion tools. */
export const TASK_STATUS_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'object',
  properties: {
    taskId: { type: 'string', description: 'The task: pass it to the task_* tools.' },
    status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    statusMessage: { type: 'string' },
    progress: {
      type: 'object',
      properties: { progress: { type: 'number' }, total: { type: 'number' }, text: { type: 'string' } },
      required: ['progress', 'text'],
    },
    question: {
      type: 'object',
      properties: {
        question: { type: 'string' },
        message: { type: 'string' },
        fields: { type: 'array', items: FIELD_SCHEMA },
      },
      required: ['question', 'message', 'fields'],
    },
    pollAfterSeconds: { type: 'number' },
  },
  required: ['taskId', 'status', 'pollAfterSeconds'],
};

const TASK_ID_PROPERTY = {
  type: 'string',
  description: 'The taskId from the result of the tool call that started the task.',
};

/**
 * The outputSchema a caller without tasks sees for a tool that may answer with a handle: the
 * tool's own result or the handle. Clients (the v1 SDK, Python's `mcp`) check
 * `structuredContent` against it and need `type: "object"` at the top, so the union sits
 * under an object schema; `$defs` move up so the tool's `$ref`s still resolve from the root.
 */
export function outputSchemaWithHandle(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { $schema, $defs, definitions, $id: _id, ...own } = schema;
  return {
    ...($schema !== undefined && { $schema }),
    type: 'object',
    ...($defs !== undefined && { $defs }),
    ...(definitions !== undefined && { definitions }),
    anyOf: [own, TASK_STATUS_SCHEMA],
  };
}

/** How a wait of a call ended: `ask` hands the task's questions back as `input_required`. */
type WaitOutcome = { kind: 'record' | 'ask'; record: TaskRecord };

/** The companion tools and the handle for callers that cannot receive a task. */

export class UnawareClients {
  private readonly names: Readonly<Record<CompanionTool, string>>;
  private readonly byName: ReadonlyMap<string, CompanionTool>;

  constructor(
    private readonly calls: ToolCalls,
    readonly settings: UnawareClientSettings,
  ) {
    this.names = Object.fromEntries(COMPANION_TOOLS.map((tool) => [tool, `${settings.prefix}${tool}`])) as Record<
      CompanionTool,
      string
    >;
    this.byName = new Map(COMPANION_TOOLS.map((tool) => [this.names[tool], tool]));
    for (const name of this.byName.keys()) {
      if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) {
        throw new RangeError(
          `unawareClients.prefix '${settings.prefix}' makes '${name}', not a valid MCP tool name (1–128 letters, digits, _, - or .)`,
        );
      }
      if (calls.registry.list().some((tool) => tool.name === name)) {
        throw new RangeError(
          `The app has a tool named '${name}', which is also a companion tool for clients without tasks; set unawareClients.prefix to another prefix`,
        );
      }
    }
  }

  /** The name of `task_wait` (with the configured prefix): the host counts it as a blocking wait. */
  get waitToolName(): string {
    return this.names.wait;
  }

  /** The names of the companion tools (the rate limits count calls to them as task reads). */
  companionNames(): ReadonlySet<string> {
    return new Set(this.byName.keys());
  }

  /** The mode a tool runs in for callers without tasks; `refuse`: a plain call is refused, as before. */
  modeOf(tool: TaskToolDefinition): UnawareClientMode | 'refuse' {
    if (tool.taskSupport === 'forbidden') return 'inline';
    const mode = tool.unawareClients ?? this.settings.mode;
    if (tool.taskSupport === 'required') return mode === 'auto' || mode === 'handle' ? mode : 'refuse';
    return mode ?? 'auto';
  }

  /**
   * The listing a caller without tasks sees: the dialect's own, where a tool that may answer
   * with a handle admits the handle in its outputSchema (and, on 2025-11-25, a `required` tool
   * that answers plain calls now says `optional`, which clients such as the v1 SDK check
   * before calling), followed by the companion tools.
   */
  listTools(listing: { tools: Record<string, unknown>[] }): { tools: Record<string, unknown>[] } {
    const tools = listing.tools.map((entry) => {
      const tool = this.calls.registry.list().find((candidate) => candidate.name === entry.name);
      const mode = tool && this.modeOf(tool);
      if (!tool || (mode !== 'auto' && mode !== 'handle')) return entry;
      const adjusted: Record<string, unknown> = { ...entry };
      if (isPlainObject(entry.outputSchema)) adjusted.outputSchema = outputSchemaWithHandle(entry.outputSchema);
      if (isPlainObject(entry.execution) && entry.execution.taskSupport === 'required') {
        adjusted.execution = { ...entry.execution, taskSupport: 'optional' };
      }
      return adjusted;
    });
    return { tools: [...tools, ...this.companionDescriptors()] };
  }

  /**
   * A `tools/call` from a caller without tasks: a companion tool's answer, or a task tool's
   * handle (or, under `auto`, its result). `undefined`: the call goes on as before (inline, or
   * refused), because the tool's mode says so.
   */
  async callTool(params: Params, ctx: UnawareCallContext): Promise<Record<string, unknown> | undefined> {
    const companion = this.byName.get(toolName(params));
    if (companion) {
      const args = isPlainObject(params?.arguments) ? params.arguments : {};
      // Bounded like any tool's arguments, before anything reads them.
      this.calls.checkArgumentSize(toolName(params), JSON.stringify(args));
      return this.callCompanion(companion, args, ctx);
    }
    const { tool, args } = this.calls.resolve(params);
    const mode = this.modeOf(tool);
    if (mode !== 'auto' && mode !== 'handle') return undefined;
    // Refused before a task exists, as a task-aware caller is (-32021).
    this.calls.checkClientCapabilities(tool, ctx.clientCapabilities);
    const carried = carriedState(ctx.requestState, tool.name, args, ctx.caller)?.taskId;
    let record: TaskRecord;
    if (carried !== undefined) {
      // A retried round of a call whose task asked: its answers go to that task.
      if (ctx.inputResponses && Object.keys(ctx.inputResponses).length > 0) {
        await this.calls.answer(ctx.caller, carried, ctx.inputResponses);
      }
      record = await asRpc(() => this.calls.engine.get(ctx.caller, carried));
    } else {
      record = await this.calls.startTask(tool, args, ctx, params);
    }
    if (mode === 'handle') return this.handle(record);
    // A grace wait holds the request open like a blocking tasks/result, so it is counted the same;
    // with every slot taken the caller gets its handle at once rather than an error.
    const release = ctx.holdGraceWait ? await ctx.holdGraceWait() : () => {};
    if (!release) return this.handle(record);
    let waited: WaitOutcome;
    try {
      waited = await this.waitOnCall(record, this.settings.graceMs, ctx, 'grace');
    } finally {
      release();
    }
    if (waited.kind === 'ask') {
      const state =
        ctx.sealState && (await ctx.sealState(newInlineState(tool.name, args, ctx.caller, {}, {}, record.taskId)));
      return {
        resultType: 'input_required',
        inputRequests: toInputRequests(waited.record.inputRequests ?? {}),
        ...(state !== undefined && { requestState: state }),
      };
    }
    const ended = waited.record;
    if (!isTerminal(ended.status) || !ended.outcome) return this.handle(ended);
    // Ended within the grace time: the answer an inline call would have given.
    this.calls.engine.resultRead(ctx.caller, ended);
    const outcome = ended.outcome;
    if (outcome.kind === 'error') throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    return { ...outcome.result };
  }

  /** The handle: what a caller without tasks gets for a task that goes on. */
  handle(record: TaskRecord): Record<string, unknown> {
    const view = this.view(record);
    return {
      content: [{ type: 'text', text: `${this.startedText(record)} ${this.describe(view)}` }],
      structuredContent: view,
    };
  }

  private startedText(record: TaskRecord): string {
    return `Started ${record.tool} as task ${record.taskId}; it goes on in the background.`;
  }

  private async callCompanion(
    tool: CompanionTool,
    args: Readonly<Record<string, unknown>>,
    ctx: UnawareCallContext,
  ): Promise<Record<string, unknown>> {
    const taskId = taskIdArgument(args);
    // Whoever sees a task end clears its marks in the session's question ledger.
    const seen = (record: TaskRecord): TaskRecord => {
      if (isTerminal(record.status) && ctx.questions.kind === 'elicit') ctx.questions.ledger?.forget(record.taskId);
      return record;
    };
    switch (tool) {
      case 'status':
        return this.statusResult(seen(await this.read(ctx.caller, taskId)));
      case 'wait': {
        const seconds = secondsArgument(args);
        const record = seen(await this.read(ctx.caller, taskId));
        const waited = await this.waitOnCall(record, seconds * 1000, ctx, 'change');
        if (waited.kind === 'ask') {
          return { resultType: 'input_required', inputRequests: toInputRequests(waited.record.inputRequests ?? {}) };
        }
        return this.statusResult(seen(waited.record));
      }
      case 'result':
        return this.result(seen(await this.read(ctx.caller, taskId)), ctx.caller);
      case 'answer':
        return this.answer(taskId, args, ctx.caller);
      case 'cancel':
        return this.cancel(taskId, ctx.caller);
    }
  }

  private async read(caller: Caller, taskId: string): Promise<TaskRecord> {
    return asRpc(() => this.calls.engine.get(caller, taskId));
  }

  /**
   * Waits on the task for a call: until it ends (`grace`) or changes status or asks something
   * new (`change`), at most `ms`, relaying questions where the caller's client can answer them.
   * `ask`: a 2026-07-28 call should hand the task's questions back as `input_required`.
   * The task itself goes on whatever happens to the wait.
   */
  private async waitOnCall(
    initial: TaskRecord,
    ms: number,
    ctx: UnawareCallContext,
    until: 'grace' | 'change',
  ): Promise<WaitOutcome> {
    const caller = ctx.caller;
    const taskId = initial.taskId;
    const channel = ctx.questions;
    let start = initial;
    // 2026-07-28 with elicitation: the answers of a retried task_wait go to the task first, and
    // the wait then measures change from the task as they left it.
    const answers = until === 'change' && channel.kind === 'rounds' ? ctx.inputResponses : undefined;
    if (answers && Object.keys(answers).length > 0) {
      await this.calls.answer(caller, taskId, answers);
      start = await this.read(caller, taskId);
    }
    const asking = (record: TaskRecord) => Object.keys(record.inputRequests ?? {}).length > 0;
    if (isTerminal(start.status)) return { kind: 'record', record: start };
    if (channel.kind === 'rounds' && asking(start)) return { kind: 'ask', record: start };
    // Nobody can be asked on this call: an open question waits for task_answer, so say so now.
    if (channel.kind === 'none' && until === 'change' && asking(start)) return { kind: 'record', record: start };
    if (ms <= 0) return { kind: 'record', record: await this.read(caller, taskId) };
    const deadline = AbortSignal.timeout(ms);
    const hangup = ctx.waitSignal ?? ctx.signal;
    const signal = AbortSignal.any([deadline, ...(hangup ? [hangup] : [])]);
    const known = new Set(Object.keys(start.inputRequests ?? {}));
    const progress = new ProgressEcho(ctx);
    try {
      if (channel.kind === 'elicit') {
        // Questions go to the person on this call's stream, and their answers to the task; a
        // second, passive wait only echoes progress, and ends with the relay. Only a hang-up
        // withdraws a dialog that is out: the wait's time ends it once no question is out
        // (within the inline question timeout), so a person's late answer still reaches the task.
        const echo = new AbortController();
        const relayEnd = hangup ? AbortSignal.any([hangup, echo.signal]) : echo.signal;
        if (progress.active) {
          this.calls.engine.waitFor(caller, taskId, (record) => progress.seen(record), relayEnd).catch(() => {});
        }
        try {
          const record = await relayQuestionsUntilDone(this.calls, caller, taskId, relayEnd, channel.elicit, {
            ...(channel.ledger && { ledger: channel.ledger }),
            deadline: { signal: deadline, answerWithinMs: INLINE_QUESTION_TIMEOUT_MS },
          });
          return { kind: 'record', record };
        } finally {
          echo.abort();
        }
      }
      const record = await this.calls.engine.waitFor(
        caller,
        taskId,
        (current) => {
          progress.seen(current);
          if (isTerminal(current.status)) return true;
          const asks = Object.keys(current.inputRequests ?? {}).some((key) => !known.has(key));
          if (asks) return true;
          return until === 'change' && current.status !== start.status;
        },
        signal,
      );
      if (channel.kind === 'rounds' && !isTerminal(record.status) && asking(record)) return { kind: 'ask', record };
      return { kind: 'record', record };
    } catch (error) {
      // The wait is over (its time is up, or the client has gone): say where the task is now.
      if (!signal.aborted && channel.kind !== 'elicit') throw toJsonRpcError(error);
      return { kind: 'record', record: await this.read(caller, taskId) };
    }
  }

  private statusResult(record: TaskRecord): Record<string, unknown> {
    const view = this.view(record);
    return { content: [{ type: 'text', text: this.describe(view) }], structuredContent: view };
  }

  /** `task_result`: the result as the tool would have answered inline, or where the task is. */
  private result(record: TaskRecord, caller: Caller): Record<string, unknown> {
    const outcome = record.outcome;
    if (!isTerminal(record.status) || !outcome) {
      const view = this.view(record);
      const text =
        record.status === 'cancelled'
          ? `Task ${record.taskId} was cancelled; it has no result.`
          : `Task ${record.taskId} has no result yet. ${this.describe(view)}`;
      return { content: [{ type: 'text', text }], structuredContent: view };
    }
    this.calls.engine.resultRead(caller, record);
    if (outcome.kind === 'error') throw new JsonRpcError(outcome.error.code, outcome.error.message, outcome.error.data);
    return { ...outcome.result };
  }

  /**
   * `task_answer`: the answer is checked against the question's schema before the task sees it.
   * A wrong answer is a tool error (`isError: true`) whose text names the field and what it
   * expects, so a model can correct it; the question stays open.
   */
  private async answer(
    taskId: string,
    args: Readonly<Record<string, unknown>>,
    caller: Caller,
  ): Promise<Record<string, unknown>> {
    const key = args.question;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_QUESTION_KEY_LENGTH) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        `question must be the name of the open question (a string of 1 to ${MAX_QUESTION_KEY_LENGTH} characters), as ${this.names.status} reports it`,
      );
    }
    const answer = args.answer;
    if (!isPlainObject(answer)) {
      throw new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        'answer must be an object with one property per field of the question, such as {"confirm": true}',
      );
    }
    const record = await this.read(caller, taskId);
    const pending = record.inputRequests?.[key];
    if (!pending) {
      const open = Object.keys(record.inputRequests ?? {});
      const text =
        open.length > 0
          ? `Task ${taskId} has no open question named '${key}'. Its open questions: ${open.map((name) => `'${name}'`).join(', ')}.`
          : `Task ${taskId} is not waiting for an answer (status: ${status2025(record)}).`;
      return { isError: true, content: [{ type: 'text', text: `${text} ${this.describe(this.view(record))}` }] };
    }
    const problem = fieldProblem(pending, answer);
    const outcome = problem
      ? undefined
      : await this.calls.answer(caller, taskId, { [key]: { action: 'accept', content: answer } });
    const refused = problem ?? outcome?.rejected[key];
    if (refused !== undefined) {
      const question = questionView(key, pending);
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `The answer to '${key}' was not accepted: ${refused}. The question is still open. It needs: ${describeFields(question.fields)}. Call ${this.names.answer} again with a corrected answer, such as ${JSON.stringify({ taskId, question: key, answer: exampleAnswer(question.fields) })}.`,
          },
        ],
      };
    }
    const after = await this.read(caller, taskId);
    const view = this.view(after);
    return {
      content: [{ type: 'text', text: `Answer to '${key}' accepted. ${this.describe(view)}` }],
      structuredContent: view,
    };
  }

  /** `task_cancel`: cancels a task still running; one that already ended is reported as it is. */
  private async cancel(taskId: string, caller: Caller): Promise<Record<string, unknown>> {
    let record: TaskRecord;
    try {
      record = await this.calls.engine.cancel(caller, taskId);
    } catch (error) {
      if (!(error instanceof TaskError && error.code === 'TASK_TERMINAL')) throw toJsonRpcError(error);
      record = await this.read(caller, taskId);
    }
    const view = this.view(record);
    const text =
      record.status === 'cancelled'
        ? `Task ${taskId} is cancelled.`
        : `Task ${taskId} had already ended (${view.status}); nothing was cancelled. ${this.describe(view)}`;
    return { content: [{ type: 'text', text }], structuredContent: view };
  }

  /** The task as the companion tools show it. */
  view(record: TaskRecord): TaskStatusView {
    const key = Object.keys(record.inputRequests ?? {})[0];
    const pending = key === undefined ? undefined : record.inputRequests?.[key];
    const progress = record.progress;
    return {
      taskId: record.taskId,
      status: status2025(record),
      ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
      ...(progress && {
        progress: {
          progress: progress.progress,
          ...(progress.total !== undefined && { total: progress.total }),
          text: progress.total !== undefined ? `${progress.progress} of ${progress.total}` : `${progress.progress}`,
        },
      }),
      ...(key !== undefined && pending && !isTerminal(record.status) && { question: questionView(key, pending) }),
      pollAfterSeconds: Math.max(1, Math.ceil(record.pollIntervalMs / 1000)),
    };
  }

  /** What a model reads: where the task is, and which tool to call next with which arguments. */
  private describe(view: TaskStatusView): string {
    const id = JSON.stringify({ taskId: view.taskId });
    const message = view.statusMessage ? ` (${view.statusMessage})` : '';
    const progress = view.progress ? ` Progress: ${view.progress.text}.` : '';
    switch (view.status) {
      case 'working':
        return `Task ${view.taskId} is working${message}.${progress} Call ${this.names.wait} with ${id} to wait for it to change or finish (up to ${TASK_WAIT_CAP_SECONDS} s per call), or ${this.names.status} in ${view.pollAfterSeconds} s; then ${this.names.result} with ${id} for its result. ${this.names.cancel} with ${id} stops it.`;
      case 'input_required': {
        const question = view.question;
        if (!question)
          return `Task ${view.taskId} is waiting for input${message}. Call ${this.names.status} with ${id}.`;
        const example = { taskId: view.taskId, question: question.question, answer: exampleAnswer(question.fields) };
        return `Task ${view.taskId} is waiting for an answer to question '${question.question}': ${question.message} It needs: ${describeFields(question.fields)}. Ask the user, then call ${this.names.answer} with ${JSON.stringify(example)} (with their answer).`;
      }
      case 'completed':
      case 'failed':
        return `Task ${view.taskId} has ${view.status === 'failed' ? 'failed' : 'finished'}${message}. Call ${this.names.result} with ${id} for its result.`;
      case 'cancelled':
        return `Task ${view.taskId} was cancelled${message}; it has no result.`;
    }
  }

  private companionDescriptors(): Record<string, unknown>[] {
    const n = this.names;
    const taskIdOnly = {
      type: 'object',
      properties: { taskId: TASK_ID_PROPERTY },
      required: ['taskId'],
    };
    return [
      {
        name: n.status,
        title: 'Task status',
        description: `Reports where a background task is: its status, progress, and any question it waits on (with the fields the answer needs). Call it with the taskId that a tool result gave you when it said the work goes on in the background. To wait for the task rather than poll, call ${n.wait}.`,
        inputSchema: taskIdOnly,
        outputSchema: TASK_STATUS_SCHEMA,
      },
      {
        name: n.wait,
        title: 'Wait for a task',
        description: `Waits until a background task changes (it finishes, fails, or asks a question) or \`seconds\` pass, then reports it like ${n.status}. Use it to follow a task in a few calls: call it again while the status is "working". \`seconds\` is at most ${TASK_WAIT_CAP_SECONDS} (also the default); larger values wait ${TASK_WAIT_CAP_SECONDS}.`,
        inputSchema: {
          type: 'object',
          properties: {
            taskId: TASK_ID_PROPERTY,
            seconds: {
              type: 'number',
              minimum: 0,
              description: `How long to wait at most, in seconds (default and maximum ${TASK_WAIT_CAP_SECONDS}).`,
            },
          },
          required: ['taskId'],
        },
        outputSchema: TASK_STATUS_SCHEMA,
      },
      {
        name: n.result,
        title: 'Task result',
        description: `Returns the result of a background task once its status is "completed" or "failed": exactly what the tool that started it would have returned. While the task still runs, it reports its status instead; call ${n.wait} first.`,
        inputSchema: taskIdOnly,
      },
      {
        name: n.answer,
        title: 'Answer a task',
        description: `Answers the question a background task waits on (status "input_required"). Pass the taskId, the question's name as ${n.status} reports it, and an answer object with one property per field, of the type it asks for. Ask the user for the answer when it is theirs to give. A wrong answer is refused with what it expects; the question stays open.`,
        inputSchema: {
          type: 'object',
          properties: {
            taskId: TASK_ID_PROPERTY,
            question: { type: 'string', description: `The question's name (question.question in ${n.status}).` },
            answer: {
              type: 'object',
              description: 'One property per field of the question, such as {"confirm": true}.',
            },
          },
          required: ['taskId', 'question', 'answer'],
        },
        outputSchema: TASK_STATUS_SCHEMA,
      },
      {
        name: n.cancel,
        title: 'Cancel a task',
        description:
          'Stops a background task that is still running; it will have no result. Use it when the user no longer wants the work done.',
        inputSchema: taskIdOnly,
        outputSchema: TASK_STATUS_SCHEMA,
      },
    ];
  }
}

/**
 * Forwards a waited-on task's progress to the call's progress token (through `onProgress`), as
 * the method reported it: each new numeric progress with the status message, and message-only
 * updates of a task that reports no numbers. An ended task's record adds nothing but a final
 * number the wait had not seen (its status message is gone by then).
 */
class ProgressEcho {
  private lastProgress: string | undefined;
  private lastMessage: string | undefined;
  constructor(private readonly ctx: CallContext) {}

  get active(): boolean {
    return this.ctx.onProgress !== undefined;
  }

  /** Always `false`, so it can serve as a wait's accept test. */
  seen(record: TaskRecord): boolean {
    const onProgress = this.ctx.onProgress;
    if (!onProgress) return false;
    const progress = record.progress;
    const progressKey = progress && JSON.stringify(progress);
    const message = isTerminal(record.status) ? undefined : record.statusMessage;
    const numberChanged = progressKey !== undefined && progressKey !== this.lastProgress;
    const messageChanged = message !== undefined && message !== this.lastMessage;
    if (isTerminal(record.status) ? !numberChanged : !numberChanged && !messageChanged) return false;
    this.lastProgress = progressKey ?? this.lastProgress;
    this.lastMessage = message ?? this.lastMessage;
    onProgress({
      ...(progress && { progress: progress.progress }),
      ...(progress?.total !== undefined && { total: progress.total }),
      ...(message !== undefined && { message }),
    });
    return false;
  }
}

function taskIdArgument(args: Readonly<Record<string, unknown>>): string {
  const taskId = args.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > MAX_TASK_ID_LENGTH) {
    throw new JsonRpcError(
      JsonRpcErrorCode.InvalidParams,
      `taskId must be a string of 1 to ${MAX_TASK_ID_LENGTH} characters: the taskId from the result of the call that started the task`,
    );
  }
  return taskId;
}

/** `task_wait`'s `seconds`: a number of 0 or more; above the cap it waits the cap. */
function secondsArgument(args: Readonly<Record<string, unknown>>): number {
  const seconds = args.seconds;
  if (seconds === undefined || seconds === null) return TASK_WAIT_CAP_SECONDS;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    // JSON has no infinity, but `1e400` parses as one: it is named as what it became.
    const shown = typeof seconds === 'number' ? String(seconds) : echoed(JSON.stringify(seconds));
    throw new JsonRpcError(
      JsonRpcErrorCode.InvalidParams,
      `seconds must be a finite number of at least 0, not ${shown} (a finite number over ${TASK_WAIT_CAP_SECONDS} waits ${TASK_WAIT_CAP_SECONDS} s)`,
    );
  }
  return Math.min(seconds, TASK_WAIT_CAP_SECONDS);
}

/** The question a pending elicitation asks, with its fields read from its requested schema. */
export function questionView(key: string, pending: PendingInput): QuestionView {
  const schema = isPlainObject(pending.params.requestedSchema) ? pending.params.requestedSchema : {};
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(properties).map(([name, raw]): QuestionField => {
    const property = isPlainObject(raw) ? raw : {};
    const allowed = allowedValues(property);
    const description =
      typeof property.description === 'string'
        ? property.description
        : typeof property.title === 'string'
          ? property.title
          : undefined;
    return {
      name,
      type: typeof property.type === 'string' ? property.type : 'string',
      required: required.has(name),
      ...(description !== undefined && { description }),
      ...(allowed && { allowed }),
      ...(typeof property.minimum === 'number' && { minimum: property.minimum }),
      ...(typeof property.maximum === 'number' && { maximum: property.maximum }),
      ...(typeof property.minLength === 'number' && { minLength: property.minLength }),
      ...(typeof property.maxLength === 'number' && { maxLength: property.maxLength }),
      ...(typeof property.format === 'string' && { format: property.format }),
      ...(property.default !== undefined && { default: property.default }),
    };
  });
  const message = typeof pending.params.message === 'string' ? pending.params.message : `Please answer: ${key}`;
  return { question: key, message, fields };
}

function allowedValues(property: Readonly<Record<string, unknown>>): unknown[] | undefined {
  if (Array.isArray(property.enum)) return [...property.enum];
  const options = Array.isArray(property.oneOf) ? property.oneOf : Array.isArray(property.anyOf) ? property.anyOf : [];
  const consts = options.filter(isPlainObject).map((option) => option.const);
  return consts.length > 0 && consts.every((value) => value !== undefined) ? consts : undefined;
}

function describeFields(fields: readonly QuestionField[]): string {
  if (fields.length === 0) return 'no fields (answer with {})';
  return fields
    .map((field) => {
      const facts = [field.type, field.required ? 'required' : 'optional'];
      if (field.allowed) facts.push(`one of ${field.allowed.map((value) => JSON.stringify(value)).join(', ')}`);
      if (field.minimum !== undefined) facts.push(`at least ${field.minimum}`);
      if (field.maximum !== undefined) facts.push(`at most ${field.maximum}`);
      if (field.format !== undefined) facts.push(`format ${field.format}`);
      return `${field.name} (${facts.join(', ')})${field.description ? `: ${field.description}` : ''}`;
    })
    .join('; ');
}

/** An answer of the right shape, for the example in the text a model reads. */
function exampleAnswer(fields: readonly QuestionField[]): Record<string, unknown> {
  return Object.fromEntries(
    fields
      .filter((field) => field.required || fields.length === 1)
      .map((field) => {
        if (field.default !== undefined) return [field.name, field.default];
        if (field.allowed && field.allowed.length > 0) return [field.name, field.allowed[0]];
        switch (field.type) {
          case 'boolean':
            return [field.name, true];
          case 'number':
          case 'integer':
            return [field.name, field.minimum ?? 1];
          default:
            return [field.name, '...'];
        }
      }),
  );
}

/**
 * The first field of `answer` that does not fit the question, said so a model can fix it:
 * missing required fields, unknown fields, wrong types and values outside the allowed ones.
 * (The tool's own answer schema checks it again when the task takes it.)
 */
function fieldProblem(pending: PendingInput, answer: Readonly<Record<string, unknown>>): string | undefined {
  const { fields } = questionView('', pending);
  const known = new Set(fields.map((field) => field.name));
  for (const name of Object.keys(answer)) {
    if (!known.has(name)) {
      return `field '${echoed(name)}' is not part of this question (its fields: ${[...known].join(', ') || 'none'})`;
    }
  }
  for (const field of fields) {
    const value = answer[field.name];
    if (value === undefined) {
      if (field.required) return `field '${field.name}' is required and expects ${expectation(field)}`;
      continue;
    }
    const typeOk =
      field.type === 'boolean'
        ? typeof value === 'boolean'
        : field.type === 'integer'
          ? Number.isInteger(value)
          : field.type === 'number'
            ? typeof value === 'number' && Number.isFinite(value)
            : typeof value === 'string';
    if (!typeOk) return `field '${field.name}' expects ${expectation(field)}, not ${echoed(JSON.stringify(value))}`;
    if (field.allowed && !field.allowed.includes(value)) {
      return `field '${field.name}' expects ${expectation(field)}, not ${echoed(JSON.stringify(value))}`;
    }
    if (typeof value === 'number') {
      if (field.minimum !== undefined && value < field.minimum) {
        return `field '${field.name}' expects a number of at least ${field.minimum}, not ${value}`;
      }
      if (field.maximum !== undefined && value > field.maximum) {
        return `field '${field.name}' expects a number of at most ${field.maximum}, not ${value}`;
      }
    }
  }
  return undefined;
}

/** The most of a caller's key or value an error message repeats. */
const ECHO_CHARS = 80;

/** A caller's text as an error message repeats it: cut at `ECHO_CHARS`, so a huge answer stays out of logs and context. */
function echoed(text: string): string {
  return text.length > ECHO_CHARS ? `${text.slice(0, ECHO_CHARS)}…` : text;
}

function expectation(field: QuestionField): string {
  if (field.allowed) return `one of ${field.allowed.map((value) => JSON.stringify(value)).join(', ')}`;
  switch (field.type) {
    case 'boolean':
      return 'true or false';
    case 'integer':
      return 'a whole number';
    case 'number':
      return 'a number';
    default:
      return 'a string';
  }
}
