/**
 * `subscriptions/listen` with `notifications.taskIds` (2026-07-28 tasks
 * extension). The SDK's listen router drops `taskIds` (workaround 6), so these
 * requests are served here: an SSE stream that opens with the acknowledgement and then carries
 * `notifications/tasks` (the task as `tasks/get` would show it) on every change.
 *
 * Once every task the stream agreed to has had its last word (a terminal status, or a final
 * "failed" when it expired or was deleted first), nothing more can come: the server ends the
 * subscription the way the 2026-07-28 core ends one gracefully, with the listen request's
 * (empty) result carrying the subscription id, and closes the response. An idle stream would
 * otherwise hold its slot, its follower and a connection until the client hung up.
 */
import type { Caller, TaskEngine } from '../engine/engine.js';
import { TaskFollower } from '../engine/follow.js';
import { expiresAt, isTerminal, type TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import { isPlainObject } from '../protocol/params.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  declaresTasksExtension,
  missingTasksExtension,
  toDetailedTask2026,
  toTask2026,
} from '../protocol/tasks-2026.js';
import type { PrincipalSlots } from './principal-slots.js';
import type { WaiterRegistry } from './waiters.js';

const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

interface ListenRequest {
  readonly id: string | number;
  readonly params: { readonly _meta?: Record<string, unknown>; readonly notifications: { readonly taskIds: unknown } };
}

/** Whether `request` is a task listen this module serves (its body already read and parsed). */
export function readTaskListen(request: Request, body: unknown): ListenRequest | undefined {
  if (request.method !== 'POST' || request.headers.get('mcp-method')?.trim() !== 'subscriptions/listen')
    return undefined;
  if (!isPlainObject(body) || body.method !== 'subscriptions/listen' || !isPlainObject(body.params)) return undefined;
  const notifications = body.params.notifications;
  if (!isPlainObject(notifications) || notifications.taskIds === undefined) return undefined;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return undefined;
  return body as unknown as ListenRequest;
}

export interface TaskListenDeps {
  readonly engine: TaskEngine;
  /** Who the HTTP front admitted. */
  readonly caller: Caller;
  /** Where the request came from: the slot key of a caller without a principal. */
  readonly clientAddress?: string;
  /** Open streams per principal; a stream holds its slot until it closes. */
  readonly slots: PrincipalSlots;
  /** Task ids one stream may follow. */
  readonly maxTaskIds: number;
  readonly waiters: WaiterRegistry;
  /** The connection closed before the stream ended (see `Admission.hangup`). */
  readonly hangup?: AbortSignal;
}

export async function serveTaskListen(
  request: Request,
  listen: ListenRequest,
  deps: TaskListenDeps,
): Promise<Response> {
  const meta = listen.params._meta ?? {};
  if (!declaresTasksExtension(meta[CLIENT_CAPABILITIES_META_KEY])) {
    return errorResponse(listen.id, missingTasksExtension('subscriptions/listen with taskIds'), 400);
  }
  if (typeof meta[PROTOCOL_VERSION_META_KEY] !== 'string') {
    return errorResponse(
      listen.id,
      new JsonRpcError(JsonRpcErrorCode.InvalidParams, 'params._meta needs the protocol version'),
      400,
    );
  }
  const requested = listen.params.notifications.taskIds;
  if (
    !Array.isArray(requested) ||
    requested.length > deps.maxTaskIds ||
    !requested.every((id) => typeof id === 'string')
  ) {
    return errorResponse(
      listen.id,
      new JsonRpcError(
        JsonRpcErrorCode.InvalidParams,
        `notifications.taskIds must be an array of at most ${deps.maxTaskIds} task ids (maxTaskIdsPerListen)`,
      ),
      400,
    );
  }
  const caller: Caller = deps.caller;
  let release: (() => void) | undefined;
  try {
    release = await deps.slots.tryAcquire({
      principal: caller.principal,
      ...(deps.clientAddress !== undefined && { clientAddress: deps.clientAddress }),
    });
  } catch (error) {
    return errorResponse(listen.id, error as JsonRpcError, 503);
  }
  if (!release) return errorResponse(listen.id, deps.slots.refusal(), 429);
  // The follower subscribes before it reads, re-reads after a gap in the runtime's events and
  // when a task's TTL runs out, and delivers each version once. Until the acknowledgement is
  // out, what it delivers is held, then sent in order.
  const held: (() => void)[] = [];
  let streaming = false;
  let send: (message: unknown) => void = () => {};
  const tag = { [SUBSCRIPTION_ID_META_KEY]: listen.id };
  const emit = (params: Record<string, unknown>) => {
    const deliver = () => send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { _meta: tag, ...params } });
    if (streaming) deliver();
    else held.push(deliver);
  };
  const follower = new TaskFollower(deps.engine, caller, {
    onChange: (record) => {
      emit({ ...toDetailedTask2026(record) });
      // A terminal state is the task's last word on this stream.
      if (isTerminal(record.status)) {
        follower.drop(record.taskId);
        endIfSaidAll();
      }
    },
    onGone: (_taskId, last) => {
      // Gone before it ended: the stream's last word says so (the spec lets a server mark a task
      // failed at its TTL); `tasks/get` answers not-found from now on.
      if (last && !isTerminal(last.status)) emit(goneTaskC(last, Date.now()));
      endIfSaidAll();
    },
    // Unreadable at the start (runtime down): not agreed to, like an unknown id.
    onUnavailable: () => {},
  });
  /** Ends the subscription once no agreed task has anything left to say (checked after each last word). */
  const endIfSaidAll = () => {
    if (streaming && !stopped && follower.size === 0) end();
  };
  let end: () => void = () => {};
  const registration = deps.waiters.enter(sessionOf(request), 'stream');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    follower.close();
    registration.leave();
    release();
  };
  // A waiter dies with its request: whichever signal hears the hangup first ends the stream.
  const hangups = deps.hangup ? [request.signal, deps.hangup] : [request.signal];
  for (const signal of hangups) signal.addEventListener('abort', stop, { once: true });
  // Only tasks the caller may read are agreed to; the acknowledgement says which.
  const unique = [...new Set(requested as string[])];
  const found = await Promise.all(unique.map((taskId) => follower.follow(taskId)));
  const agreed = unique.filter((_taskId, index) => found[index]);
  if (hangups.some((signal) => signal.aborted)) stop();

  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      send = (message: unknown) => {
        if (stopped) return;
        try {
          controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
        } catch {
          stop();
        }
      };
      end = () => {
        // The listen request's result: the subscription ended gracefully, not by a dropped connection.
        send({ jsonrpc: '2.0', id: listen.id, result: { resultType: 'complete', _meta: tag } });
        stop();
        try {
          controller.close();
        } catch {
          // Already closed by the client.
        }
      };
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: tag, notifications: { taskIds: agreed } },
      });
      // Where each task stands now (and anything newer since), so a late subscriber does not
      // wait for the next change.
      for (const deliver of held.splice(0)) deliver();
      streaming = true;
      // Every agreed task may already have had its last word (or none was agreed to).
      endIfSaidAll();
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' },
  });
}

/** The last word on a task that expired (or was deleted) before it ended. */
export function goneTaskC(last: TaskRecord, now: number): Record<string, unknown> {
  const expired = now >= expiresAt(last);
  const message = expired ? 'Task has expired' : 'Task was deleted';
  return {
    ...toTask2026(last),
    status: 'failed',
    statusMessage: message,
    lastUpdatedAt: new Date(now).toISOString(),
    error: { code: JsonRpcErrorCode.InvalidParams, message: `Failed to retrieve task: ${message}` },
  };
}

/** Which session a request belongs to, for the waiter counts (2026 requests have none). */
function sessionOf(request: Request): string {
  return request.headers.get('mcp-session-id') ?? '(no session)';
}

function errorResponse(id: string | number, error: JsonRpcError, status: number): Response {
  return Response.json({ jsonrpc: '2.0', id, error: error.toJSON() }, { status });
}
