/**
 * Review probes: what a task-aware client sees, and SEP-1686 client-chosen ids of anonymous
 * callers reached through the companion tools.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { connectV1, type RunningServer, rpc2026, startServer, WITH_TASKS } from './support.js';

const principalFromBearer = ({ headers }: { headers?: Headers }) =>
  headers?.get('authorization')?.replace(/^Bearer /, '') ?? null;
const bearer = (who: string) => ({ authorization: `Bearer ${who}` });

let running: RunningServer;
beforeAll(async () => {
  running = await startServer({
    manifest: taskManifest,
    instances: [new FixtureTools(), new GeneralTools()],
    resolvePrincipal: principalFromBearer,
    sep1686: true,
  });
});
afterAll(() => running?.close());

const names = (tools: { name: string }[]) => tools.map((tool) => tool.name).filter((name) => name.startsWith('task_'));

describe('task-aware clients', () => {
  it('see no companion tools (2025-11-25 with tasks, 2026-07-28 with the extension) and cannot call them', async () => {
    const aware = await connectV1(running.url, { token: 'alice', capabilities: { tasks: {} } });
    expect(names((await aware.listTools()).tools)).toEqual([]);
    const call = await aware.callTool({ name: 'task_status', arguments: { taskId: 'x' } }).then(
      (result) => ({ result }),
      (error: { code: number; message: string }) => ({ code: error.code, message: error.message }),
    );
    expect(call).toMatchObject({ code: -32602 });
    await aware.close();
    const modern = await rpc2026(running.url, 'tools/list', {}, { capabilities: WITH_TASKS, headers: bearer('alice') });
    expect(names(modern.result?.tools as { name: string }[])).toEqual([]);
    const unaware = await rpc2026(running.url, 'tools/list', {}, { capabilities: {}, headers: bearer('alice') });
    expect(names(unaware.result?.tools as { name: string }[]).sort()).toEqual([
      'task_answer',
      'task_cancel',
      'task_result',
      'task_status',
      'task_wait',
    ]);
  });
});
