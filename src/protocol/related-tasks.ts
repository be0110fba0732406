/**
 * How a child task (`ctx.spawn`) names its parent on the wire: `_meta` of its `Task` object, on
 * 2025-11-25 and 2026-07-28 alike (`tasks/get`, `tasks/list`, status notifications). SEP-1686
 * tasks carry no such key: a child is not in any client's id namespace there.
 */
import { RELATED_TASK_IDS_META_KEY } from '../engine/children.js';
import type { TaskRecord } from '../engine/task.js';

/** `{ _meta: { "io.modelcontextprotocol/relatedTaskIds": [parent] } }` for a child, else nothing. */
export function relatedTasksMeta(record: TaskRecord): { _meta?: Record<string, unknown> } {
  return record.parent ? { _meta: { [RELATED_TASK_IDS_META_KEY]: [record.parent.taskId] } } : {};
}
