/**
 * Child tasks on the in-process runtime, through the real registry and engine: results,
 * a failing child caught by its parent, the children bound, cascade cancel, argument checks,
 * the slot left free while a parent waits, and two principals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Caller, TaskEngine } from '../../src/engine/engine.js';
import type { LifecycleEvent } from '../../src/engine/lifecycle.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { childrenManifest, Fanner } from './children-app.js';

const alice: Caller = { principal: 'alice' };
const bob: Caller = { principal: 'bob' };

let runtimes: MemoryTaskRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.map((runtime) => runtime.close()));
  runtimes = [];
});

function setup(options: { concurrency?: number; maxChildrenPerTask?: number; maxLiveTasksPerOwner?: number } = {}) {
  const events: LifecycleEvent[] = [];
  const observer = { observe: (event: LifecycleEvent) => events.push(event) };
  const registry = new ToolRegistry({ manifest: childrenManifest, instances: [new Fanner()], observer });
  const runtime = new MemoryTaskRuntime({
    executor: registry,
    observer,
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
  });
  runtimes.push(runtime);
  const engine = new TaskEngine({
    runtime,
    observer,
    policy: {
      ...(options.maxChildrenPerTask !== undefined && { maxChildrenPerTask: options.maxChildrenPerTask }),
      ...(options.maxLiveTasksPerOwner !== undefined && { maxLiveTasksPerOwner: options.maxLiveTasksPerOwner }),
    },
  });
  registry.spawnWith(engine);
  const fan = (caller: Caller, args: Record<string, unknown>) => engine.create(caller, { tool: 'fan', args });
  return { engine, runtime, events, fan };
}

function structured(record: TaskRecord): unknown {
  return record.outcome?.kind === 'result' ? record.outcome.result.structuredContent : record.outcome;
}

describe('child tasks on the memory runtime', () => {
  it('runs children as tasks of their own and gives the parent their results', async () => {
    const { engine, fan, events } = setup();
    const parent = await fan(alice, { parts: 4, holdMs: 20 });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.status).toBe('completed');
    expect(structured(done)).toMatchObject({ sum: 0 + 2 + 4 + 6 });
    const children = Object.values(done.children ?? {});
    expect(children).toHaveLength(4);
    for (const entry of children) {
      const child = await engine.get(alice, entry.taskId);
      expect(child).toMatchObject({ tool: 'part', owner: 'alice', status: 'completed' });
      expect(child.parent?.taskId).toBe(parent.taskId);
      expect(entry.ended).toBe('completed');
    }
    expect(events.some((event) => event.type === 'parked' && event.task.taskId === parent.taskId)).toBe(true);
    expect(events.some((event) => event.type === 'woke' && event.task.taskId === parent.taskId)).toBe(true);
    expect(events.filter((event) => event.type === 'spawned')).toHaveLength(4);
  });

  it('shows "n of m subtasks done" while the parent waits, and frees its slot for the children', async () => {
    // One slot: the children could never run if the waiting parent kept it.
    const { engine, fan } = setup({ concurrency: 1 });
    const parent = await fan(alice, { parts: 3, holdMs: 50 });
    const seen = await engine.waitFor(
      alice,
      parent.taskId,
      (record) => record.statusMessage === '1 of 3 subtasks done',
    );
    expect(seen.status).toBe('working');
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(structured(done)).toMatchObject({ sum: 6 });
  });

  it('rejects the parent with an error naming the failed child, which the parent may catch', async () => {
    const { engine, fan } = setup();
    const caught = await fan(alice, { parts: 3, failAt: 1, catchFailure: true });
    const done = await engine.waitForTerminal(alice, caught.taskId);
    const failedChild = done.children?.['part#2'];
    expect(failedChild?.ended).toBe('completed');
    const report = structured(done) as { failure: string };
    expect(report.failure).toBe(`Child task part (${failedChild?.taskId}) failed: part 1 broke`);

    const uncaught = await fan(alice, { parts: 2, failAt: 0 });
    const failed = await engine.waitForTerminal(alice, uncaught.taskId);
    expect(failed.outcome).toMatchObject({ kind: 'result', isError: true });
    expect(failed.statusMessage).toMatch(/^Child task part \(.+\) failed: part 0 broke$/);
  });

  it('cancels the unfinished children with their parent', async () => {
    const { engine, fan } = setup();
    const parent = await fan(alice, { parts: 3, holdMs: 60_000 });
    await engine.waitFor(alice, parent.taskId, (record) => record.statusMessage === '0 of 3 subtasks done');
    const cancelled = await engine.cancel(alice, parent.taskId);
    expect(cancelled.status).toBe('cancelled');
    for (const entry of Object.values(cancelled.children ?? {})) {
      const child = await engine.get(alice, entry.taskId);
      expect(child.status).toBe('cancelled');
      expect(child.statusMessage).toBe('cancelled with its parent task');
    }
  });

  it('cancels the unfinished children of a deleted parent', async () => {
    const { engine, fan } = setup();
    const parent = await fan(alice, { parts: 2, holdMs: 60_000 });
    const waiting = await engine.waitFor(
      alice,
      parent.taskId,
      (record) => record.statusMessage === '0 of 2 subtasks done',
    );
    await engine.delete(alice, parent.taskId);
    for (const entry of Object.values(waiting.children ?? {})) {
      const child = await engine.get(alice, entry.taskId);
      expect(child.status).toBe('cancelled');
      expect(child.statusMessage).toBe('cancelled with its parent task');
    }
  });

  it("counts an anonymous parent's children in its address's budget, as the parent", async () => {
    const { engine } = setup();
    const anonymous: Caller = { principal: null, liveBudget: 'address-a' };
    const parent = await engine.create(anonymous, { tool: 'fan', args: { parts: 2 } });
    const done = await engine.waitForTerminal(anonymous, parent.taskId);
    expect(done.liveBudget).toBe('address-a');
    for (const entry of Object.values(done.children ?? {})) {
      expect((await engine.get(anonymous, entry.taskId)).liveBudget).toBe('address-a');
    }
  });

  it('refuses the spawn past maxChildrenPerTask, naming the bound', async () => {
    const { engine, fan } = setup({ maxChildrenPerTask: 3 });
    const parent = await fan(alice, { parts: 4 });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.statusMessage).toBe(
      `Task ${parent.taskId} has started 3 child tasks, the most one task may start (maxChildrenPerTask is 3); wait for children in batches or raise the bound`,
    );
    expect(Object.keys(done.children ?? {})).toHaveLength(3);
  });

  it('starts up to the default bound of 1000 children, and refuses the 1001st', async () => {
    // The live-task quota counts children too: room for the parent and its thousand.
    const { engine, fan } = setup({ maxLiveTasksPerOwner: 1002 });
    const parent = await fan(alice, { parts: 1001 });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.statusMessage).toMatch(/has started 1000 child tasks.*maxChildrenPerTask is 1000/);
    expect(Object.keys(done.children ?? {})).toHaveLength(1000);
  }, 60_000);

  it("counts children against their principal's live-task quota", async () => {
    const { engine, fan } = setup({ maxLiveTasksPerOwner: 3 });
    const parent = await fan(alice, { parts: 3, holdMs: 100 });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.statusMessage).toBe(
      'Too many unfinished tasks for this caller: the limit is 3 (maxLiveTasksPerPrincipal); wait for some to end or cancel them',
    );
    expect(Object.keys(done.children ?? {})).toHaveLength(2);
  });

  it('checks the arguments against the child tool schema, naming the field', async () => {
    const { engine, fan } = setup();
    const parent = await fan(alice, { parts: 0, badArgs: true });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    expect(done.statusMessage).toMatch(/^Invalid arguments for tool part: index: /);
    expect(done.children).toBeUndefined();
  });

  it('shows children only to their principal, in the listing and in tasks/get', async () => {
    const { engine, fan } = setup();
    const parent = await fan(alice, { parts: 2 });
    const done = await engine.waitForTerminal(alice, parent.taskId);
    const childIds = Object.values(done.children ?? {}).map((entry) => entry.taskId);
    const aliceList = (await engine.list(alice)).tasks.map((task) => task.taskId);
    expect(aliceList).toEqual(expect.arrayContaining([parent.taskId, ...childIds]));
    expect((await engine.list(bob)).tasks).toEqual([]);
    for (const id of childIds) await expect(engine.get(bob, id)).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
  });
});
