/**
 * What the unaware-client tests share: the test-only app's server, reading handles and task
 * views out of plain tool results, and following a task with `task_wait`.
 */
import { expect } from 'vitest';
import type { TaskServerOptions } from '../../src/host/task-server.js';
import type { CallOutcome, PlainCaller, PlainResult } from './plain-callers.js';
import { type RunningServer, startServer } from './support.js';
import { taskManifest } from './unaware-app/src/__generated__/tasks.generated.js';
import { UnawareTools } from './unaware-app/src/unaware-tools.js';

/** The bearer token is the principal; no token is anonymous. */
export const principalFromBearer = ({ headers }: { headers?: Headers }) =>
  headers?.get('authorization')?.replace(/^Bearer /, '') ?? null;

export interface UnawareServer extends RunningServer {
  readonly tools: UnawareTools;
}

/** The test-only app on a loopback port, principals from bearer tokens. */
export async function startUnawareServer(options: Partial<TaskServerOptions> = {}): Promise<UnawareServer> {
  const tools = new UnawareTools();
  const running = await startServer({
    manifest: taskManifest,
    instances: [tools],
    resolvePrincipal: principalFromBearer,
    ...options,
  });
  return { ...running, tools };
}

/** The companion tools' default names. */
export const COMPANIONS = ['task_status', 'task_wait', 'task_result', 'task_answer', 'task_cancel'] as const;

/** `structuredContent` of a handle and of the companion tools (but `task_result` of a done task). */
export interface TaskView {
  readonly taskId: string;
  readonly status: string;
  readonly statusMessage?: string;
  readonly pollAfterSeconds: number;
  readonly question?: {
    readonly question: string;
    readonly message: string;
    readonly fields: readonly { name: string; type: string; allowed?: readonly unknown[] }[];
  };
}

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The result of a call, or a failure that says what came back instead. */
export function resultOf(outcome: CallOutcome, what: string): PlainResult {
  if ('result' in outcome) return outcome.result;
  throw new Error(`${what} did not answer with a result: ${JSON.stringify(outcome)}`);
}

export function textOf(result: PlainResult): string {
  return result.content.map((block) => block.text ?? '').join('\n');
}

/** The task view a handle or companion tool answered with, checked for the documented shape. */
export function viewOf(result: PlainResult, what: string): TaskView {
  const view = result.structuredContent as TaskView | undefined;
  expect(result.isError ?? false, `${what}: ${textOf(result)}`).toBe(false);
  expect(view, `${what} has no structuredContent: ${JSON.stringify(result)}`).toBeDefined();
  expect(typeof view?.taskId).toBe('string');
  expect(typeof view?.status).toBe('string');
  expect(typeof view?.pollAfterSeconds).toBe('number');
  return view as TaskView;
}

export async function callView(caller: PlainCaller, name: string, args: Record<string, unknown>): Promise<TaskView> {
  return viewOf(resultOf(await caller.call(name, args), `${caller.label} ${name}`), `${caller.label} ${name}`);
}

/**
 * Reads the task with `task_status`, then calls `task_wait` (which answers once the task
 * changes) until the task ends or `accept` takes its view; at most `rounds` waits.
 */
export async function waitUntil(
  caller: PlainCaller,
  taskId: string,
  accept: (view: TaskView) => boolean = (view) => TERMINAL.has(view.status),
  rounds = 8,
): Promise<TaskView> {
  const now = await callView(caller, 'task_status', { taskId });
  if (accept(now)) return now;
  const seen: string[] = [now.status];
  for (let round = 0; round < rounds; round++) {
    const view = await callView(caller, 'task_wait', { taskId });
    if (accept(view)) return view;
    seen.push(view.status);
    if (TERMINAL.has(view.status)) break;
  }
  throw new Error(`${caller.label}: task ${taskId} never got there; task_wait said ${seen.join(', ')}`);
}
