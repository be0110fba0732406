/**
 * The task dashboard's routes: the page, and a small JSON API it polls. Every API call passes
 * the same door as `/mcp` (Host, Origin, bearer token) and reads through the engine as that
 * caller would: only the caller's tasks, another principal's task is "not found". An app may
 * name admin principals, who may look at the tasks of a principal they name (`?as=`). Every
 * call spends the caller's read budget, the one its `tasks/get` calls spend.
 */
import type { Caller, TaskEngine } from '../engine/engine.js';
import { TaskError } from '../engine/errors.js';
import { expiresAt, type TaskRecord, type TaskStatus } from '../engine/task.js';
import type { ClientConnection } from '../http/client-address.js';
import { readText } from '../http/json-body.js';
import type { RateBudget, RateLimitedError, RateSubject } from '../http/rate-budget.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { ToolCalls } from '../protocol/tool-calls.js';
import { dashboardPage } from './page.js';
import { resultText, TaskTimelines, type TimelineEntry } from './timeline.js';

export interface DashboardOptions {
  /** Principals that may view and act on any principal's tasks (with `?as=<principal>`). */
  readonly admins?: readonly string[];
}

export interface DashboardDeps {
  readonly engine: TaskEngine;
  readonly calls: ToolCalls;
  /** The same checks as `/mcp`: the caller (and its address), or the response refusing it. */
  readonly admit: (
    request: Request,
    connection: ClientConnection | undefined,
  ) => Promise<{ caller: Caller; clientAddress?: string } | Response>;
  /** The budgets `/mcp` requests spend; API calls spend the read budget. */
  readonly rateLimits?: RateBudget;
  /** Hears of each call refused over the rate limit. */
  readonly onRefused?: (reason: 'rate_limit') => void;
  readonly options?: DashboardOptions;
  /**
   * The stories of the tasks, when the host also passes them the lifecycle events it observes
   * (for timeouts, repeated creates and waits); else the dashboard keeps its own, from record
   * changes only.
   */
  readonly timelines?: TaskTimelines;
}

export const DASHBOARD_PATH = '/dashboard';

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
/** Tasks read for one listing at most; the newest `LIST_LIMIT` of them are shown. */
const LIST_SCAN = 1000;
const LIST_LIMIT = 200;
const MAX_BODY_BYTES = 64 * 1024;
const MAX_ID_LENGTH = 256;

export interface DashboardRoutes {
  handle(request: Request, url: URL, connection?: ClientConnection): Promise<Response | undefined>;
  close(): void;
}

export function dashboardRoutes(deps: DashboardDeps): DashboardRoutes {
  const timelines = deps.timelines ?? new TaskTimelines();
  const unsubscribe = deps.engine.subscribe(({ record }) => timelines.record(record));
  const admins = new Set(deps.options?.admins ?? []);
  const tools = deps.calls.registry
    .list()
    .filter((tool) => tool.taskSupport !== 'forbidden')
    .map((tool) => tool.name);

  /** Spends `points` reads of the caller's budget: the refusal, if over it. */
  const spend = async (subject: RateSubject, points = 1): Promise<RateLimitedError | undefined> => {
    const limited = await deps.rateLimits?.consume(subject, 'read', points);
    if (limited) deps.onRefused?.('rate_limit');
    return limited;
  };

  const api = async (request: Request, url: URL, rest: string, connection?: ClientConnection): Promise<Response> => {
    const admitted = await deps.admit(request, connection);
    if (admitted instanceof Response) return admitted;
    // Counted against whoever asks (an admin acting as someone spends its own budget).
    const subject: RateSubject = {
      principal: admitted.caller.principal,
      ...(admitted.clientAddress !== undefined && { clientAddress: admitted.clientAddress }),
    };
    const limited = await spend(subject);
    if (limited) return rateLimitedResponse(limited);
    const caller = actingAs(admitted.caller, url, admins);
    if (caller instanceof Response) return caller;
    const viewer = { principal: admitted.caller.principal, admin: admins.has(admitted.caller.principal ?? '') };

    if (rest === '/tasks') {
      if (request.method !== 'GET') return methodNotAllowed('GET');
      return listTasks(deps.engine, caller, url, tools, viewer, () => spend(subject));
    }
    const match = /^\/tasks\/([^/]+)(\/cancel|\/answer)?$/.exec(rest);
    if (!match) return json({ error: 'not found' }, 404);
    const taskId = decodedOrUndefined(match[1] as string);
    if (taskId === undefined) return json({ error: 'the task id is not valid percent-encoding' }, 400);
    if (taskId.length > MAX_ID_LENGTH) return json({ error: `a task id has at most ${MAX_ID_LENGTH} characters` }, 400);
    const action = match[2];
    try {
      if (!action) {
        if (request.method !== 'GET') return methodNotAllowed('GET');
        const record = await deps.engine.get(caller, taskId);
        return json({ task: detail(record, timelines.of(record)) });
      }
      if (request.method !== 'POST') return methodNotAllowed('POST');
      if (action === '/cancel') {
        const record = await deps.engine.cancel(caller, taskId);
        return json({ task: detail(record, timelines.of(record)) });
      }
      const body = await readBody(request);
      if (body instanceof Response) return body;
      const { key, action: answerAction, content } = body as { key?: unknown; action?: unknown; content?: unknown };
      if (typeof key !== 'string' || key.length === 0 || key.length > MAX_ID_LENGTH) {
        return json({ error: 'the body needs `key`: the question to answer' }, 400);
      }
      const chosen = answerAction ?? 'accept';
      if (chosen !== 'accept' && chosen !== 'decline' && chosen !== 'cancel') {
        return json({ error: '`action` is accept, decline or cancel' }, 400);
      }
      if (chosen === 'accept' && (typeof content !== 'object' || content === null || Array.isArray(content))) {
        return json({ error: 'an accepted answer needs `content`: an object' }, 400);
      }
      const outcome = await deps.calls.answer(caller, taskId, {
        [key]: { action: chosen, ...(chosen === 'accept' && { content }) },
      });
      if (!outcome.accepted.includes(key)) {
        const reason = outcome.rejected[key] ?? `the task is not waiting for an answer to '${key}'`;
        return json({ error: `answer refused: ${reason}` }, 422);
      }
      const record = await deps.engine.get(caller, taskId);
      return json({ task: detail(record, timelines.of(record)) });
    } catch (error) {
      return engineError(error);
    }
  };

  return {
    async handle(request, url, connection) {
      const path = url.pathname;
      if (path !== DASHBOARD_PATH && !path.startsWith(`${DASHBOARD_PATH}/`)) return undefined;
      if (path === DASHBOARD_PATH || path === `${DASHBOARD_PATH}/`) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed('GET');
        // The page is a shell with no data: everything it shows comes from the API, behind auth.
        return new Response(dashboardPage(DASHBOARD_PATH), {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-store',
            'content-security-policy':
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'",
            'x-content-type-options': 'nosniff',
          },
        });
      }
      if (path.startsWith(`${DASHBOARD_PATH}/api/`))
        return api(request, url, path.slice(`${DASHBOARD_PATH}/api`.length), connection);
      return json({ error: 'not found' }, 404);
    },
    close: unsubscribe,
  };
}

/** The caller, or the principal an admin asked to act as. */
function actingAs(caller: Caller, url: URL, admins: ReadonlySet<string>): Caller | Response {
  const as = url.searchParams.get('as');
  if (as === null || as === '' || as === caller.principal) return caller;
  if (caller.principal === null || !admins.has(caller.principal)) {
    return json({ error: 'only an admin principal may look at the tasks of another principal' }, 403);
  }
  if (as.length > MAX_ID_LENGTH) return json({ error: `a principal has at most ${MAX_ID_LENGTH} characters` }, 400);
  return { principal: as };
}

async function listTasks(
  engine: TaskEngine,
  caller: Caller,
  url: URL,
  tools: readonly string[],
  viewer: { principal: string | null; admin: boolean },
  /** Spends one more read for each page past the first (which the request paid for). */
  nextPage: () => Promise<RateLimitedError | undefined>,
): Promise<Response> {
  const status = url.searchParams.get('status') || undefined;
  const tool = url.searchParams.get('tool') || undefined;
  if (status !== undefined && !STATUSES.includes(status as TaskStatus)) {
    return json({ error: `status is one of ${STATUSES.join(', ')}` }, 400);
  }
  if (tool !== undefined && !tools.includes(tool)) return json({ error: `no task tool is named '${tool}'` }, 400);
  const base = { tools, statuses: STATUSES, viewer: { ...viewer, actingAs: caller.principal } };
  if (caller.principal === null) {
    return json({
      ...base,
      listing: false,
      reason: 'Nothing identifies you (no bearer token), so there is no list of your tasks: open a task by its id.',
      tasks: [],
    });
  }
  const found: TaskRecord[] = [];
  let cursor: string | undefined;
  let scanned = 0;
  do {
    const page = await engine.list(caller, cursor);
    scanned += page.tasks.length;
    found.push(...page.tasks.filter((record) => matches(record, status, tool)));
    cursor = page.nextCursor;
    // Over the read budget part-way: show what was read, marked as cut short.
  } while (cursor !== undefined && scanned < LIST_SCAN && !(await nextPage()));
  const newest = found.slice(-LIST_LIMIT).reverse();
  return json({
    ...base,
    listing: true,
    truncated: cursor !== undefined || found.length > LIST_LIMIT,
    tasks: newest.map(summary),
  });
}

function matches(record: TaskRecord, status: string | undefined, tool: string | undefined): boolean {
  return (status === undefined || record.status === status) && (tool === undefined || record.tool === tool);
}

function summary(record: TaskRecord) {
  return {
    taskId: record.taskId,
    tool: record.tool,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    ...(record.progress && { progress: record.progress }),
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlLeftMs: record.ttlMs === null ? null : Math.max(0, expiresAt(record) - Date.now()),
    pollIntervalMs: record.pollIntervalMs,
    ...(record.priority !== undefined && record.priority !== 0 && { priority: record.priority }),
    questions: Object.entries(record.inputRequests ?? {}).map(([key, pending]) => ({
      key,
      message: typeof pending.params.message === 'string' ? pending.params.message : pending.question,
      schema: pending.params.requestedSchema ?? { type: 'object', properties: {} },
    })),
  };
}

function detail(record: TaskRecord, timeline: readonly TimelineEntry[]) {
  const outcome = record.outcome;
  return {
    ...summary(record),
    owner: record.owner,
    timeline,
    // A child links its parent; a parent lists its children (`ctx.spawn`), in spawn order.
    ...(record.parent && { parent: record.parent.taskId }),
    ...(record.children && {
      children: Object.entries(record.children).map(([key, child]) => ({
        key,
        taskId: child.taskId,
        tool: child.tool,
        ...(child.ended !== undefined && { ended: child.ended }),
      })),
    }),
    ...(outcome?.kind === 'result' && {
      result: {
        text: resultText(outcome.result),
        isError: outcome.isError,
        ...(outcome.result.structuredContent !== undefined && { structured: outcome.result.structuredContent }),
      },
    }),
    ...(outcome?.kind === 'error' && { error: outcome.error }),
  };
}

async function readBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) return json({ error: `the body is larger than ${MAX_BODY_BYTES} bytes` }, 413);
  // Read within the bound: a chunked body declares no length, and `request.text()` would buffer all of it.
  const text = await readText(request, MAX_BODY_BYTES);
  if (text === undefined) return json({ error: `the body is larger than ${MAX_BODY_BYTES} bytes` }, 413);
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body;
  } catch {
    // Answered below.
  }
  return json({ error: 'the body must be a JSON object' }, 400);
}

function engineError(error: unknown): Response {
  if (error instanceof TaskError) {
    if (error.code === 'TASK_NOT_FOUND') return json({ error: 'task not found' }, 404);
    if (error.code === 'TASK_TERMINAL') return json({ error: error.message }, 409);
    if (error.code === 'RUNTIME_UNAVAILABLE') return json({ error: error.message }, 503);
    return json({ error: error.message }, 400);
  }
  // What the tool layer's answer path throws: JSON-RPC errors (-32602 for an unknown task).
  if (error instanceof JsonRpcError) {
    return json({ error: error.message }, /not found/i.test(error.message) ? 404 : 400);
  }
  throw error;
}

/** `decodeURIComponent`, or `undefined` for malformed escapes (which it throws on). */
function decodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** 429 with `Retry-After`, the limit named, as `/mcp` answers. */
function rateLimitedResponse(limited: RateLimitedError): Response {
  return Response.json(
    { error: limited.message, ...(limited.data as Record<string, unknown>) },
    {
      status: 429,
      headers: { 'retry-after': String(Math.ceil(limited.retryAfterMs / 1000)), 'cache-control': 'no-store' },
    },
  );
}

function json(body: unknown, status = 200): Response {
  return Response.json(body, { status, headers: { 'cache-control': 'no-store' } });
}

function methodNotAllowed(allow: string): Response {
  return Response.json({ error: 'method not allowed' }, { status: 405, headers: { allow } });
}

/** `MCP_TASK_DASHBOARD=1` (or `true`) turns the dashboard on where the options leave it open. */
export function dashboardFromEnvironment(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.MCP_TASK_DASHBOARD === '1' || env.MCP_TASK_DASHBOARD === 'true';
}
