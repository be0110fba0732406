/** Wire projections of one engine record (one record, several dialects). */
import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../src/engine/task.js';
import { status2025, toTask2025 } from '../../src/protocol/tasks-2025.js';
import { declaresTasksExtension, toDetailedTask2026, toTask2026 } from '../../src/protocol/tasks-2026.js';

const base: TaskRecord = {
  taskId: 't1',
  owner: null,
  tool: 'tool',
  args: {},
  status: 'working',
  statusMessage: 'queued',
  createdAt: Date.UTC(2026, 0, 1),
  lastUpdatedAt: Date.UTC(2026, 0, 1, 0, 0, 5),
  ttlMs: 60_000,
  pollIntervalMs: 500,
};
const toolError: TaskRecord = {
  ...base,
  status: 'completed',
  outcome: { kind: 'result', result: { content: [{ type: 'text', text: 'no' }], isError: true }, isError: true },
};

describe('2025-11-25 projection', () => {
  it('uses ttl and pollInterval with ISO timestamps', () => {
    expect(toTask2025(base)).toEqual({
      taskId: 't1',
      status: 'working',
      statusMessage: 'queued',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:05.000Z',
      ttl: 60_000,
      pollInterval: 500,
    });
  });

  it('reports a tool error as failed', () => {
    expect(status2025(toolError)).toBe('failed');
    expect(toTask2025(toolError).status).toBe('failed');
  });
});

describe('2026-07-28 projection', () => {
  it('uses ttlMs and pollIntervalMs and never the B names', () => {
    const task = toTask2026(base) as unknown as Record<string, unknown>;
    expect(task).toMatchObject({ ttlMs: 60_000, pollIntervalMs: 500 });
    expect('ttl' in task || 'pollInterval' in task).toBe(false);
  });

  it('keeps a tool error completed and inlines the result', () => {
    expect(toDetailedTask2026(toolError)).toMatchObject({ status: 'completed', result: { isError: true } });
  });

  it('inlines nothing while the task works, and only the error when it failed', () => {
    const working = toDetailedTask2026(base);
    expect('result' in working || 'error' in working || 'inputRequests' in working).toBe(false);
    const failed = toDetailedTask2026({
      ...base,
      status: 'failed',
      outcome: { kind: 'error', error: { code: -32603, message: 'boom' } },
    });
    expect(failed.error).toEqual({ code: -32603, message: 'boom' });
    expect('result' in failed).toBe(false);
  });

  it('reads the extension from per-request client capabilities only', () => {
    expect(declaresTasksExtension({ extensions: { 'io.modelcontextprotocol/tasks': {} } })).toBe(true);
    expect(declaresTasksExtension({ extensions: {} })).toBe(false);
    expect(declaresTasksExtension({ tasks: {} })).toBe(false);
    expect(declaresTasksExtension(undefined)).toBe(false);
  });
});
