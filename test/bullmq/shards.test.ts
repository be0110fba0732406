/**
 * Where a task lives: its shard follows from its id alone, shards get hash tags that spread
 * over a cluster's equal slot ranges, and every bad setting is refused with a message naming it.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/host/config.js';
import { clusterSlotOf, runtimeNames, shardIndexOf } from '../../src/runtime/bullmq/keys.js';
import { checkConcurrency } from '../../src/runtime/bullmq/worker.js';

describe('shards', () => {
  it('computes the cluster slot as Redis does', () => {
    // Values from CLUSTER KEYSLOT: `foo` and the CRC16 check string.
    expect(clusterSlotOf('foo')).toBe(12182);
    expect(clusterSlotOf('123456789')).toBe(12739);
  });

  it('maps a task id to a shard by the id alone, the same in every process, and evenly', () => {
    expect(shardIndexOf('any-id', 1)).toBe(0);
    // Pinned to FNV-1a's published test vectors (`a`, `foobar`): changing the function would
    // strand every task in flight.
    expect(shardIndexOf('a', 7)).toBe(0xe40c292c % 7);
    expect(shardIndexOf('foobar', 5)).toBe(0xbf9cf968 % 5);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[shardIndexOf(`id-${i}-${i * 7919}`, 3)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(850);
  });

  it('tags each shard so that N shards fall in N equal slot ranges, and keys of a shard share its slot', () => {
    const names = runtimeNames('app', 'jobs', 3);
    expect(names.shards.map((shard) => Math.floor((clusterSlotOf(shard.queue.slice(1, -1)) * 3) / 16_384))).toEqual([
      0, 1, 2,
    ]);
    const shard = names.shardOf('some-task');
    expect(names.record('some-task')).toBe(shard.record('some-task'));
    expect(shard.record('some-task')).toContain(shard.queue);
    expect(shard.owner('alice')).toContain(shard.queue);
    expect(runtimeNames('app', 'jobs').shards.map((one) => one.queue)).toEqual(['{jobs}']);
  });

  it('refuses shard counts, queue names and prefixes that would break the layout', () => {
    expect(() => runtimeNames('app', 'jobs', 0)).toThrow(/shards must be a whole number from 1 to 64, got 0/);
    expect(() => runtimeNames('app', 'jobs', 1.5)).toThrow(/got 1.5/);
    expect(() => runtimeNames('app', 'jobs', 65)).toThrow(/from 1 to 64/);
    expect(() => runtimeNames('app', '{jobs}')).toThrow(/queue name must not contain/);
    expect(() => runtimeNames('{app}', 'jobs')).toThrow(/prefix must not contain/);
  });

  it('refuses a worker concurrency that is not a whole number of 1 or more, naming it', () => {
    expect(() => checkConcurrency(8)).not.toThrow();
    expect(() => checkConcurrency(0)).toThrow(/concurrency must be a whole number of 1 or more, got 0/);
    expect(() => checkConcurrency(2.5)).toThrow(/got 2.5/);
  });

  it('reads the cluster, the shard count and the shards to consume from the environment, naming bad values', () => {
    expect(
      readConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, [::1]:7001', TASK_SHARDS: '3', TASK_WORKER_SHARDS: '0,2' })
        .redis,
    ).toEqual({
      connection: {
        clusterNodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '::1', port: 7001 },
        ],
      },
      shards: 3,
      worker: { consumeShards: [0, 2] },
    });
    expect(readConfig({}).redis).toBeUndefined();
    const refused = (env: Record<string, string>) => () => readConfig(env);
    expect(refused({ REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'x:1' })).toThrow(
      /REDIS_CLUSTER_NODES="x:1" is not valid: .*REDIS_URL unset/,
    );
    expect(refused({ REDIS_CLUSTER_NODES: 'x' })).toThrow(/REDIS_CLUSTER_NODES="x" is not valid: .*host:port/);
    expect(refused({ REDIS_CLUSTER_NODES: ' , ' })).toThrow(/REDIS_CLUSTER_NODES=/);
    expect(refused({ REDIS_URL: 'redis://x', TASK_SHARDS: 'three' })).toThrow(
      /TASK_SHARDS="three" is not valid: TASK_SHARDS must be a whole number from 1 to 64/,
    );
    expect(refused({ REDIS_URL: 'redis://x', TASK_SHARDS: '0' })).toThrow(/TASK_SHARDS="0"/);
    expect(refused({ REDIS_URL: 'redis://x', TASK_SHARDS: '3', TASK_WORKER_SHARDS: '0,3' })).toThrow(
      /TASK_WORKER_SHARDS="0,3" is not valid: .*each below TASK_SHARDS/,
    );
    expect(refused({ REDIS_URL: 'redis://x', REDIS_PREFIX: '{app}' })).toThrow(/REDIS_PREFIX="\{app\}"/);
  });
});
