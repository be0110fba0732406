/**
 * What a 2026-07-28 call without a task carries from one multi-round-trip round to the next:
 * the `ctx.step` results and the answers given so far. Each round runs the method from the top;
 * with this state its steps return their stored results instead of running again, so work
 * before a question happens once.
 *
 * The state travels through the client as `requestState`, so it is sealed by the host with a
 * server key (HMAC; the client can read it but not forge it) and bound here to the call it
 * belongs to: the same tool, the same arguments and the same principal.
 */
import { createHash } from 'node:crypto';
import type { Caller } from '../engine/engine.js';
import type { InputAnswer } from '../engine/task.js';
import { ErrorCode, RpcError } from './rpc-error.js';

/** Steps and answers one inline call may carry: beyond this, the call should be a task. */
export const MAX_INLINE_STATE_BYTES = 64 * 1024;

export interface InlineState {
  readonly v: 1;
  readonly tool: string;
  /** SHA-256 of the arguments' JSON: the state only resumes the very same call. */
  readonly args: string;
  readonly principal: string | null;
  readonly steps: Readonly<Record<string, unknown>>;
  readonly answers: Readonly<Record<string, InputAnswer>>;
  /**
   * The task this call started, when it was called by a client without tasks and its task asked
   * while the call waited: the next round delivers its answers to that task.
   */
  readonly taskId?: string;
}

/** Seals a state into the wire string, and reads a verified one back (both done by the host). */
export interface InlineStateCodec {
  seal(state: InlineState): Promise<string>;
}

export function newInlineState(
  tool: string,
  args: unknown,
  caller: Caller,
  steps: Readonly<Record<string, unknown>>,
  answers: Readonly<Record<string, InputAnswer>>,
  taskId?: string,
): InlineState {
  const state: InlineState = {
    v: 1,
    tool,
    args: digestOf(args),
    principal: caller.principal,
    steps,
    answers,
    ...(taskId !== undefined && { taskId }),
  };
  const size = Buffer.byteLength(JSON.stringify(state));
  if (size > MAX_INLINE_STATE_BYTES) {
    throw new RpcError(
      ErrorCode.InternalError,
      `Tool ${tool}: its ctx.step results and answers (${size} bytes) exceed the ${MAX_INLINE_STATE_BYTES}-byte limit of a call without a task; call it as a task`,
    );
  }
  return state;
}

/**
 * The carried state, if the round brought one, after checking it belongs to this call. A state
 * sealed for another tool, other arguments or another principal is refused (-32602), never
 * replayed into the wrong call.
 */
export function carriedState(state: unknown, tool: string, args: unknown, caller: Caller): InlineState | undefined {
  if (state === undefined) return undefined;
  const candidate = state as Partial<InlineState> | null;
  const fits =
    candidate !== null &&
    typeof candidate === 'object' &&
    candidate.v === 1 &&
    candidate.tool === tool &&
    candidate.args === digestOf(args) &&
    candidate.principal === caller.principal &&
    typeof candidate.steps === 'object' &&
    typeof candidate.answers === 'object' &&
    (candidate.taskId === undefined || typeof candidate.taskId === 'string');
  if (!fits) throw new RpcError(ErrorCode.InvalidParams, 'requestState does not belong to this call');
  return candidate as InlineState;
}

function digestOf(args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(args ?? {}))
    .digest('base64url');
}
