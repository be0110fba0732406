/**
 * `ctx.spawn` and `ctx.all` for one run: arguments checked against the child tool's schema,
 * keys per call site, the child made through the host's `ChildSpawner` and recorded by the
 * runtime, and the child's stored outcome turned back into its method's return value.
 */
import type { ChildEntry } from '../engine/children.js';
import type { ChildSpawner, ExecutionControl } from '../engine/runtime.js';
import { jsonBytes } from '../engine/sizes.js';
import type { TaskRecord } from '../engine/task.js';
import { JsonRpcError, JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
import type { ChildTask, TaskContext } from './context.js';
import type { TaskToolDefinition } from './definition.js';
import { repeatKey } from './replay-keys.js';

/**
 * A child task did not complete: it failed, returned an error result, or was cancelled. The
 * message names the child (tool and task id) and what it said; the parent may catch it.
 */
export class ChildTaskFailedError extends Error {
  override readonly name = 'ChildTaskFailedError';
  constructor(
    /** The child's task id. */
    readonly childTaskId: string,
    /** The tool the child ran. */
    readonly tool: string,
    /** How it ended: `failed`, `cancelled`, or `completed` with an error result. */
    readonly status: string,
    /** What the child said (its error or status message). */
    readonly reason: string,
  ) {
    super(`Child task ${tool} (${childTaskId}) ${status === 'cancelled' ? 'was cancelled' : 'failed'}: ${reason}`);
  }
}

/** What `ctx.spawn` needs of the run and the registry. */
export interface SpawnSupport {
  readonly parent: Pick<TaskRecord, 'taskId' | 'owner' | 'liveBudget'>;
  readonly control: Pick<ExecutionControl, 'spawn' | 'awaitChildren'>;
  readonly spawner: ChildSpawner | undefined;
  /** The app's tool by name (throws for an unknown one). */
  readonly toolOf: (name: string) => TaskToolDefinition;
  /** Validated arguments (throws naming the first bad field). */
  readonly parse: (tool: TaskToolDefinition, args: unknown) => unknown;
  readonly versionOf: (tool: TaskToolDefinition) => string | undefined;
  readonly maxArgumentBytes: number;
  readonly onSpawned?: (child: ChildEntry, key: string) => void;
}

/** `ctx.spawn` and `ctx.all` for a run without a task (inline calls): both refuse, saying why. */
export function inlineChildren(toolName: string): Pick<TaskContext, 'spawn' | 'all'> {
  const refuse = (): never => {
    throw new JsonRpcError(
      JsonRpcErrorCode.InvalidRequest,
      `Tool ${toolName} spawns child tasks, which only a task can do: call it as a task`,
    );
  };
  return { spawn: async () => refuse(), all: async () => refuse() };
}

/** `ctx.spawn` and `ctx.all` for one run of a task. */
export function taskChildren(support: SpawnSupport, parentTool: string): Pick<TaskContext, 'spawn' | 'all'> {
  const spawned = new Map<string, number>();
  // Spawns of this run between their start and their record: counted against the bound too,
  // so children started at once (`Promise.all`) cannot pass it together.
  let inFlight = 0;
  const wait = async (entries: readonly ChildEntry[]): Promise<readonly unknown[]> => {
    const awaitChildren = support.control.awaitChildren;
    if (!awaitChildren) throw new Error('This runtime cannot wait for child tasks');
    const records = await awaitChildren.call(support.control, entries);
    return records.map((record) => childResult(record, support.toolOf(record.tool)));
  };
  const handle = (entry: ChildEntry): ChildTask<unknown> => ({
    taskId: entry.taskId,
    tool: entry.tool,
    result: async () => (await wait([entry]))[0],
  });
  const entries = new WeakMap<ChildTask<unknown>, ChildEntry>();
  return {
    spawn: async (name, args) => {
      // The key is taken before anything awaits, so concurrent spawns get keys in call order.
      const count = (spawned.get(name) ?? 0) + 1;
      spawned.set(name, count);
      const key = repeatKey(name, count);
      const { spawner } = support;
      const spawn = support.control.spawn;
      if (!spawner || !spawn) {
        throw new Error(`${parentTool} spawned ${name}, but this runtime was not given a way to create child tasks`);
      }
      const tool = support.toolOf(name);
      if (tool.taskSupport === 'forbidden') {
        throw new JsonRpcError(
          JsonRpcErrorCode.InvalidParams,
          `${name} is a @Tool, not a @Task, so it cannot run as a child task`,
        );
      }
      const validated = JSON.parse(JSON.stringify(support.parse(tool, args) ?? {})) as unknown;
      const bytes = jsonBytes(validated);
      if (bytes > support.maxArgumentBytes) {
        throw new JsonRpcError(
          JsonRpcErrorCode.InvalidParams,
          `The arguments of child ${name} are ${bytes} bytes, over the ${support.maxArgumentBytes}-byte limit (maxArgumentBytes)`,
        );
      }
      const version = support.versionOf(tool);
      inFlight++;
      const entry = await spawn
        .call(support.control, key, async (childCount) => {
          const child = await spawner.spawnChild(
            {
              taskId: support.parent.taskId,
              owner: support.parent.owner,
              ...(support.parent.liveBudget !== undefined && { liveBudget: support.parent.liveBudget }),
              childCount: childCount + inFlight - 1,
            },
            key,
            {
              tool: tool.name,
              args: validated,
              ...(tool.ttlMs !== undefined && { toolTtlMs: tool.ttlMs }),
              ...(tool.pollIntervalMs !== undefined && { toolPollIntervalMs: tool.pollIntervalMs }),
              ...(tool.priority !== undefined && { toolPriority: tool.priority }),
              ...(version !== undefined && { toolVersion: version }),
            },
          );
          return { taskId: child.taskId, tool: child.tool };
        })
        .finally(() => {
          inFlight--;
        });
      support.onSpawned?.(entry, key);
      const child = handle(entry);
      entries.set(child, entry);
      return child as never;
    },
    all: async (children) => {
      const list = children.map((child) => {
        const entry = entries.get(child);
        if (!entry) throw new Error('ctx.all takes the children ctx.spawn returned in this run');
        return entry;
      });
      return (await wait(list)) as never;
    },
  };
}

/**
 * A child's return value from its stored outcome, as its method returned it (`structured`: the
 * structured content; `json`: the parsed text; `text`; `none`: undefined; else the whole
 * result); a child that did not complete throws `ChildTaskFailedError`.
 */
export function childResult(record: TaskRecord, tool: TaskToolDefinition): unknown {
  const outcome = record.outcome;
  if (record.status === 'cancelled' || !outcome) {
    throw new ChildTaskFailedError(record.taskId, record.tool, record.status, record.statusMessage ?? record.status);
  }
  if (outcome.kind === 'error') {
    throw new ChildTaskFailedError(record.taskId, record.tool, 'failed', outcome.error.message);
  }
  if (outcome.isError) {
    throw new ChildTaskFailedError(record.taskId, record.tool, 'failed', record.statusMessage ?? 'tool error');
  }
  const result = outcome.result;
  const text = firstText(result);
  switch (tool.result) {
    case 'structured':
      return result.structuredContent;
    case 'json':
      return text === undefined ? undefined : JSON.parse(text);
    case 'text':
      return text ?? '';
    case 'none':
      return undefined;
    default:
      return result;
  }
}

function firstText(result: Readonly<Record<string, unknown>>): string | undefined {
  const content = Array.isArray(result.content) ? result.content : [];
  const block = content.find((item): item is { type: 'text'; text: string } => item?.type === 'text');
  return block?.text;
}
