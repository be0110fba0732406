/**
 * A task waiting for its tool's version shows in the lifecycle logs (reason `version`, the two
 * versions, never the arguments) and in the `mcp_task_waiting_by_reason` gauge.
 */
import { describe, expect, it } from 'vitest';
import { logObserver } from '../../src/observe/log.js';
import type { Logger } from '../../src/observe/logger.js';
import { TaskMetrics } from '../../src/observe/metrics.js';

describe('a version wait', () => {
  it('is one info line, task waits (version), with both versions and no arguments', () => {
    const lines: [string, string, Record<string, unknown> | undefined][] = [];
    const record = (level: string) => (message: string, data?: Record<string, unknown>) =>
      void lines.push([level, message, data]);
    const logger: Logger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    logObserver(logger, 'worker').observe({
      type: 'waiting',
      task: { taskId: 't1', tool: 'count_primes', principal: 'alice', jobId: 't1' },
      reason: 'version',
      version: '3',
      workerVersion: '4',
    });
    expect(lines).toEqual([
      [
        'info',
        'task waits (version)',
        {
          event: 'waiting',
          taskId: 't1',
          tool: 'count_primes',
          principal: 'alice',
          role: 'worker',
          jobId: 't1',
          reason: 'version',
          version: '3',
          workerVersion: '4',
        },
      ],
    ]);
  });

  it('counts in mcp_task_waiting_by_reason{reason="version"}', async () => {
    const metrics = new TaskMetrics({ stats: async () => ({ waiting: { principal_share: 0, version: 2 } }) });
    const { body } = await metrics.render();
    expect(body).toContain('mcp_task_waiting_by_reason{reason="version"} 2');
    expect(body).toContain('mcp_task_waiting_by_reason{reason="principal_share"} 0');
  });
});
