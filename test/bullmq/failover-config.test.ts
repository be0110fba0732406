/**
 * The failover settings without Redis: `REDIS_SENTINELS` / `REDIS_SENTINEL_NAME` and
 * `REDIS_DURABILITY` as read from the environment (bad values named), and what a Sentinel or
 * cluster connection is built with. The failovers themselves run in test/cluster/.
 */
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/host/config.js';
import { silentLogger } from '../../src/observe/logger.js';
import { BullmqTaskRuntime, createRedisClient, parseSentinels } from '../../src/runtime/bullmq/index.js';

describe('failover settings', () => {
  it('reads the sentinels, the watched name and the durability from the environment', () => {
    expect(
      readConfig({
        REDIS_SENTINELS: '10.0.0.1:26379, [::1]:26380',
        REDIS_SENTINEL_NAME: 'tasks-primary',
        REDIS_DURABILITY: 'replicated',
      }).redis,
    ).toEqual({
      connection: {
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'tasks-primary',
      },
      durability: 'replicated',
    });
    expect(readConfig({ REDIS_URL: 'redis://x', REDIS_DURABILITY: 'primary' }).redis).toEqual({
      connection: 'redis://x',
      durability: 'primary',
    });
  });

  it('names the variable that is wrong', () => {
    const refused = (env: Record<string, string>) => () => readConfig(env);
    expect(refused({ REDIS_SENTINELS: 'x:1' })).toThrow(/REDIS_SENTINEL_NAME="" is not valid: .*sentinel monitor/);
    expect(refused({ REDIS_SENTINEL_NAME: 'p' })).toThrow(
      /REDIS_SENTINEL_NAME="p" is not valid: .*with REDIS_SENTINELS/,
    );
    expect(refused({ REDIS_SENTINELS: 'x', REDIS_SENTINEL_NAME: 'p' })).toThrow(/REDIS_SENTINELS="x" is not valid/);
    expect(refused({ REDIS_SENTINELS: 'x:1', REDIS_SENTINEL_NAME: 'p q' })).toThrow(/REDIS_SENTINEL_NAME="p q"/);
    expect(refused({ REDIS_URL: 'redis://x', REDIS_SENTINELS: 'x:1', REDIS_SENTINEL_NAME: 'p' })).toThrow(
      /REDIS_SENTINELS="x:1" is not valid: .*REDIS_URL, REDIS_CLUSTER_NODES unset/,
    );
    expect(refused({ REDIS_CLUSTER_NODES: 'x:1', REDIS_SENTINELS: 'x:2', REDIS_SENTINEL_NAME: 'p' })).toThrow(
      /REDIS_SENTINELS="x:2"/,
    );
    expect(refused({ REDIS_URL: 'redis://x', REDIS_DURABILITY: 'quorum' })).toThrow(
      /REDIS_DURABILITY="quorum" is not valid: REDIS_DURABILITY must be primary or replicated/,
    );
    expect(() => parseSentinels('x:99999', 'p')).toThrow(/REDIS_SENTINELS: "x:99999" is not host:port/);
  });

  it('follows the sentinels with a failover detector, and keeps each role its failure behaviour', () => {
    const connection = {
      sentinels: [{ host: '127.0.0.1', port: 1 }],
      name: 'p',
      redisOptions: { lazyConnect: true, password: 'secret', maxRetriesPerRequest: 5 },
    };
    const request = createRedisClient(connection, 'request', silentLogger, 'r') as Redis;
    const worker = createRedisClient(connection, 'worker', silentLogger, 'w') as Redis;
    try {
      expect(request.options).toMatchObject({
        sentinels: [{ host: '127.0.0.1', port: 1 }],
        name: 'p',
        password: 'secret',
        failoverDetector: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
      });
      expect(worker.options.maxRetriesPerRequest).toBeNull();
      // Reconnects ask a sentinel again at most half a second apart.
      expect(request.options.retryStrategy?.(100)).toBe(500);
      const readonly = new Error("READONLY You can't write against a read only replica.");
      expect(request.options.reconnectOnError?.(readonly)).toBe(1);
      expect(worker.options.reconnectOnError?.(readonly)).toBe(2);
      expect(worker.options.reconnectOnError?.(new Error('ERR other'))).toBe(false);
    } finally {
      request.disconnect();
      worker.disconnect();
    }
  });

  it('reads from cluster masters only, whatever the app asked', () => {
    const client = createRedisClient(
      { clusterNodes: [{ host: '127.0.0.1', port: 1 }], clusterOptions: { scaleReads: 'slave', lazyConnect: true } },
      'request',
      silentLogger,
      'c',
    ) as Cluster;
    try {
      expect(client.options.scaleReads).toBe('master');
    } finally {
      client.disconnect();
    }
  });

  it('refuses a replica wait the operation deadline cannot hold', () => {
    const make = (replicaWaitMs: number) => () =>
      new BullmqTaskRuntime({
        connection: { lazyConnect: true, port: 1 },
        durability: 'replicated',
        operationTimeoutMs: 2000,
        replicaWaitMs,
        logger: silentLogger,
      });
    expect(make(2000)).toThrow(/replicaWaitMs must be .* below operationTimeoutMs \(2000\), got 2000/);
    expect(make(0)).toThrow(/replicaWaitMs/);
  });
});
