/**
 * `subscriptions/listen` with `notifications.taskIds` (2026-07-28 tasks extension, protocol.md
 * §5.7). The SDK's listen router drops `taskIds` (sdk-hosting.md §3, workaround 6), so these
 * requests are served here: an SSE stream that opens with the acknowledgement and then carries
 * `notifications/tasks` (the task as `tasks/get` would show it) on every change.
 */
import type { Caller, TaskEngine } from '../engine/engine.js';
import { isVisibleTo } from '../engine/engine.js';
import type { TaskRecord } from '../engine/task.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  declaresTasksExtension,
  missingTasksExtension,
  toDetailedTaskC,
} from '../protocol/dialect-c.js';
import { isPlainObject } from '../protocol/params.js';
import { ErrorCode, RpcError } from '../protocol/rpc-error.js';
import type { PrincipalSlots } from './principal-slots.js';

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
  /** Open streams per principal; a stream holds its slot until it closes. */
  readonly slots: PrincipalSlots;
  /** Task ids one stream may follow. */
  readonly maxTaskIds: number;
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
      new RpcError(ErrorCode.InvalidParams, 'params._meta needs the protocol version'),
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
      new RpcError(
        ErrorCode.InvalidParams,
        `notifications.taskIds must be an array of at most ${deps.maxTaskIds} task ids (maxTaskIdsPerListen)`,
      ),
      400,
    );
  }
  const caller = deps.caller;
  const release = deps.slots.tryAcquire(caller.principal);
  if (!release) return errorResponse(listen.id, deps.slots.refusal(), 429);
  // Subscribe before reading, so a change between a read and the subscription is not lost;
  // changes that arrive before the acknowledgement are held and sent after it.
  const wanted = new Set(requested as string[]);
  const held: TaskRecord[] = [];
  let deliver: ((record: TaskRecord) => void) | undefined;
  const unsubscribe = deps.engine.subscribe(({ record }) => {
    if (!wanted.has(record.taskId) || !isVisibleTo(record, caller)) return;
    if (deliver) deliver(record);
    else held.push(record);
  });
  // Only tasks the caller may read are agreed to; the acknowledgement says which.
  const read = await Promise.all([...wanted].map((taskId) => deps.engine.get(caller, taskId).catch(() => undefined)));
  const current = new Map(read.flatMap((record) => (record ? [[record.taskId, record] as const] : [])));
  for (const taskId of wanted) if (!current.has(taskId)) wanted.delete(taskId);
  const agreed = [...current.keys()];
  const tag = { [SUBSCRIPTION_ID_META_KEY]: listen.id };

  const encoder = new TextEncoder();
  const stop = () => {
    unsubscribe();
    release();
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (message: unknown) => {
        try {
          controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`));
        } catch {
          stop();
        }
      };
      const notify = (record: TaskRecord) => {
        if (wanted.has(record.taskId)) {
          send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { _meta: tag, ...toDetailedTaskC(record) } });
        }
      };
      send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: tag, notifications: { taskIds: agreed } },
      });
      // Where each task stands now, so a late subscriber does not wait for the next change.
      for (const record of current.values()) notify(record);
      // Held changes newer than what was read; older ones would show a stale state last.
      for (const record of held.splice(0)) {
        if (record.lastUpdatedAt > (current.get(record.taskId)?.lastUpdatedAt ?? -1)) notify(record);
      }
      deliver = notify;
    },
    cancel() {
      stop();
    },
  });
  request.signal.addEventListener('abort', () => stop(), { once: true });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' },
  });
}

function errorResponse(id: string | number, error: RpcError, status: number): Response {
  return Response.json({ jsonrpc: '2.0', id, error: error.toJSON() }, { status });
}
