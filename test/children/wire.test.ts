/** How a child task names its parent on the wire: `_meta` of its Task, in both task dialects. */
import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../src/engine/task.js';
import { RELATED_TASK_IDS_META_KEY } from '../../src/index.js';
import { toTask2025 } from '../../src/protocol/tasks-2025.js';
import { toDetailedTask2026, toTask2026 } from '../../src/protocol/tasks-2026.js';

const base: TaskRecord = {
  taskId: 'child-1',
  owner: 'alice',
  tool: 'part',
  args: {},
  status: 'working',
  createdAt: 0,
  lastUpdatedAt: 0,
  ttlMs: 60_000,
  pollIntervalMs: 1000,
};

describe('relatedTaskIds', () => {
  it('names the parent of a child task on 2025-11-25 and 2026-07-28', () => {
    const child: TaskRecord = { ...base, parent: { taskId: 'parent-1', key: 'part' } };
    const meta = { [RELATED_TASK_IDS_META_KEY]: ['parent-1'] };
    expect(RELATED_TASK_IDS_META_KEY).toBe('io.modelcontextprotocol/relatedTaskIds');
    expect(toTask2025(child)._meta).toEqual(meta);
    expect(toTask2026(child)._meta).toEqual(meta);
    expect(toDetailedTask2026(child)._meta).toEqual(meta);
  });

  it('adds nothing to a task without a parent', () => {
    expect('_meta' in toTask2025(base)).toBe(false);
    expect('_meta' in toTask2026(base)).toBe(false);
  });
});
