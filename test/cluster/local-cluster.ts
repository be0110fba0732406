/**
 * The tests' side of `test/support/local-redis.ts`: a `describe` for suites that start their own
 * Redis Cluster. Without the Redis binaries they skip with a notice, except in CI (`CI` set),
 * where they fail (`.ci/run` installs them).
 */
import { describe, it } from 'vitest';
import { redisBinariesAvailable } from '../support/local-redis.js';

export {
  type ClusterNodeAddress,
  clusterClient,
  type LocalCluster,
  redisBinariesAvailable,
  startLocalCluster,
} from '../support/local-redis.js';

const binariesAvailable = redisBinariesAvailable();

/** `describe` that needs redis-server and redis-cli: skipped (with a notice) without them, failing in CI. */
export function describeWithClusterBinaries(name: string, body: () => void): void {
  if (binariesAvailable) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs redis-server and redis-cli', () => {
        throw new Error('redis-server/redis-cli are not installed, and CI is set: .ci/run installs them');
      });
    });
    return;
  }
  console.warn(`\n!! Skipping "${name}": redis-server or redis-cli is not installed\n`);
  describe.skip(name, body);
}
