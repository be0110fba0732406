/**
 * Fair shares where the contract suite cannot look: two real worker processes keep one
 * principal's runs within its share together while another principal's task starts, and a
 * slot whose holder stopped renewing it (a killed worker) frees itself when its lease runs out.
 */
import { Queue } from 'bullmq';
import { expect, it, vi } from 'vitest';
import { isTerminal } from '../../src/engine/task.js';
import { createRedisClient } from '../../src/runtime/bullmq/connection.js';
import { BullmqTaskRuntime } from '../../src/runtime/bullmq/index.js';
import { runtimeNames } from '../../src/runtime/bullmq/keys.js';
import { PrincipalShares, SHARE_LEASE_MS } from '../../src/runtime/bullmq/principal-shares.js';
import { sleep } from '../contract/runtime-contract.js';
import { type RedisScope, useRedisScope } from '../support/redis-scope.js';
import { ChildWorker } from './child-worker.js';
import { describeWithRedis, newRecord, quietLogger, REDIS_URL, waitForRecord, withRedis } from './support.js';

/** A `PrincipalShares` on a client of its own and a clock the test moves by hand (`clock.now`). */
function sharesOnHandClock(scope: RedisScope) {
  const client = createRedisClient(REDIS_URL, 'worker', quietLogger, 'share-test');
  scope.onClose(async () => client.quit());
  const clock = { now: Date.now() };
  const shares = new PrincipalShares(
    client,
    runtimeNames(scope.prefix),
    () => clock.now,
    () => {},
  );
  scope.onClose(() => shares.close());
  return { client, clock, shares };
}

describeWithRedis('fair shares between principals on BullMQ', () => {
  const scope = useRedisScope();

  it("keeps one principal within its share across two worker processes while another's task starts", async () => {
    const children = [
      new ChildWorker(scope.prefix, { CONCURRENCY: 4 }),
      new ChildWorker(scope.prefix, { CONCURRENCY: 4 }),
    ];
    for (const child of children) scope.onClose(() => child.stop());
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    await Promise.all(children.map((child) => child.ready()));

    const alices = await Promise.all(
      Array.from({ length: 16 }, () =>
        runtime.create(newRecord({ script: 'hold', ms: 150 }), { maxRunningForOwner: 2 }),
      ),
    );
    const bobs = await runtime.create(newRecord({ script: 'hold', ms: 10 }, { owner: 'bob' }), {
      maxRunningForOwner: 2,
    });
    const bobDone = await waitForRecord(runtime, bobs.taskId, (record) => isTerminal(record.status), 20_000);
    expect(bobDone.status).toBe('completed');
    // Bob's task ended while most of Alice's still waited their turn.
    const aliceEnded = await Promise.all(alices.map((task) => runtime.get(task.taskId)));
    expect(aliceEnded.filter((record) => record && isTerminal(record.status)).length).toBeLessThan(alices.length);

    for (const task of alices) {
      const done = await waitForRecord(runtime, task.taskId, (record) => isTerminal(record.status), 30_000);
      expect(done.status).toBe('completed');
    }
    const most = await withRedis((client) => client.get(`${scope.prefix}:share-most:alice`));
    expect(Number(most)).toBe(2);
    // Both processes ran some of Alice's tasks: the bound held across them, not inside one.
    for (const child of children) {
      expect(child.reports.some((report) => alices.some((task) => task.taskId === report.taskId))).toBe(true);
    }
  }, 60_000);

  it("frees a SIGKILLed worker's slot when its task fails as lost, and the principal's next task starts", async () => {
    // Short lock and stall timings in both processes; a lost worker fails its task at once.
    const settings = { LOCK_MS: 1000, STALLED_MS: 500, MAX_STALLED: 0 };
    const children = [new ChildWorker(scope.prefix, settings), new ChildWorker(scope.prefix, settings)];
    for (const child of children) scope.onClose(() => child.stop());
    const runtime = new BullmqTaskRuntime({ connection: REDIS_URL, prefix: scope.prefix, logger: quietLogger });
    scope.onClose(() => runtime.close());
    await Promise.all(children.map((child) => child.ready()));

    const hung = await runtime.create(newRecord({ script: 'hang' }), { maxRunningForOwner: 1 });
    const holder = await Promise.race(
      children.map((child) =>
        child.waitFor((report) => report.event === 'started' && report.taskId === hung.taskId).then(() => child),
      ),
    );
    const next = await runtime.create(newRecord({ script: 'finish' }), { maxRunningForOwner: 1 });
    await waitForRecord(
      runtime,
      next.taskId,
      (record) => record.statusMessage === 'queued (1 running for this caller)',
    );
    // Killed only once the waiting job has left its worker (it may be the same process).
    const queue = new Queue(runtimeNames(scope.prefix).shardOf(next.taskId).queue, {
      connection: { url: REDIS_URL },
      prefix: scope.prefix,
    });
    scope.onClose(() => queue.close());
    for (let tries = 0; !(await (await queue.getJob(next.taskId))?.isDelayed()); tries++) {
      if (tries > 200) throw new Error('the waiting job never left its worker');
      await sleep(10);
    }
    holder.kill('SIGKILL');
    const lost = await waitForRecord(runtime, hung.taskId, (record) => isTerminal(record.status), 20_000);
    expect(lost.status).toBe('failed');
    // Well before the lease would have run out by itself.
    const done = await waitForRecord(runtime, next.taskId, (record) => isTerminal(record.status), SHARE_LEASE_MS / 2);
    expect(done.status).toBe('completed');
  }, 60_000);

  it('frees a slot whose holder stopped renewing it once its lease runs out', async () => {
    const { clock, shares } = sharesOnHandClock(scope);
    const held = await shares.acquire('alice', 'task-1', 1, 1);
    expect('release' in held).toBe(true);
    expect(await shares.acquire('alice', 'task-2', 1, 2)).toEqual({ running: 1 });
    // Another principal has its own share.
    expect('release' in (await shares.acquire('bob', 'task-3', 1, 3))).toBe(true);
    // The holder is gone (no renewal reaches Redis in this clock's future): the lease runs out.
    clock.now += SHARE_LEASE_MS + 1;
    const next = await shares.acquire('alice', 'task-2', 1, 2);
    expect('release' in next).toBe(true);
    // A run after a lost worker keeps the slot it holds rather than waiting behind itself.
    expect('release' in (await shares.acquire('alice', 'task-2', 1, 2))).toBe(true);
    for (const turn of [held, next]) if ('release' in turn) await turn.release();
  });

  it('renews every slot this process holds with one timer, and brings no released slot back', async () => {
    // Only intervals are faked (before the renewal's timer is made): not the Redis client's timers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    scope.onClose(async () => vi.useRealTimers());
    const { client, clock, shares } = sharesOnHandClock(scope);
    // A third of a lease later: the renewal's timer fires.
    const toNextRenewal = () => {
      clock.now += SHARE_LEASE_MS / 3;
      vi.advanceTimersByTime(SHARE_LEASE_MS / 3);
    };
    const running = runtimeNames(scope.prefix).shares.running('alice');
    const first = await shares.acquire('alice', 'task-1', 3, 1);
    const second = await shares.acquire('alice', 'task-2', 3, 2);
    const bobs = await shares.acquire('bob', 'task-3', 3, 3);
    if (!('release' in first) || !('release' in second) || !('release' in bobs)) throw new Error('no slot');
    await first.release();
    // One transaction a running set (Alice's, Bob's), its expiry with it: no command of its own.
    const transactions = vi.spyOn(client, 'multi');
    const pexpires = vi.spyOn(client, 'pexpire');
    toNextRenewal();
    expect(transactions).toHaveBeenCalledTimes(2);
    expect(pexpires).not.toHaveBeenCalled();
    const renewedUntil = clock.now + SHARE_LEASE_MS;
    await vi.waitFor(async () => expect(Number(await client.zscore(running, 'task-2'))).toBe(renewedUntil));
    expect(Number(await client.zscore(runtimeNames(scope.prefix).shares.running('bob'), 'task-3'))).toBe(renewedUntil);
    // Released before the renewal: not renewed back into the set.
    expect(await client.zscore(running, 'task-1')).toBeNull();
    // An earlier run of task-2 in this process ends while the later one goes on: still renewed.
    shares.held('alice', 'task-2').stopRenewing();
    // Removed by someone else while its run goes on here (an earlier run's late release): back.
    await client.zrem(running, 'task-2');
    toNextRenewal();
    await vi.waitFor(async () =>
      expect(Number(await client.zscore(running, 'task-2'))).toBe(clock.now + SHARE_LEASE_MS),
    );
    const rewrittenUntil = clock.now + SHARE_LEASE_MS;
    // Written back into a set that had gone (its last member removed): with its expiry again.
    expect(await client.pttl(running)).toBeGreaterThan(SHARE_LEASE_MS);
    // A slot that stopped renewing (its release is on its way) keeps its last lease.
    second.stopRenewing();
    toNextRenewal();
    await vi.waitFor(async () =>
      expect(Number(await client.zscore(runtimeNames(scope.prefix).shares.running('bob'), 'task-3'))).toBe(
        clock.now + SHARE_LEASE_MS,
      ),
    );
    expect(Number(await client.zscore(running, 'task-2'))).toBe(rewrittenUntil);
    await second.release();
    await bobs.release();
  });
});
