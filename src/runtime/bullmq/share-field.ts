/**
 * The fair share a job counts against, as a field of the job's hash: written by the create that
 * adds the job on one Redis (record-fold.ts), read by the script that activates the job, which
 * takes the share's slot without parsing the job data (`SHARE_TAKE_SCRIPT`, principal-shares.ts),
 * and removed by a cancel that replaces the job's data (record-store.ts).
 */
import type { ShareNames } from './keys.js';

/** The field's name in BullMQ's job hash. */
export const SHARE_FIELD = 'mcpShare';

/**
 * `limit:home:part`: the share's limit, the index of the owner's home shard, and the owner's part
 * of the share's key names (`ShareNames.homeIndex`, `ownerPart`; the scripts build the names
 * from `ShareNames.bases`).
 */
export function shareField(
  shares: ShareNames,
  share: { readonly owner: string | null; readonly limit: number },
): string {
  return `${share.limit}:${shares.homeIndex(share.owner)}:${shares.ownerPart(share.owner)}`;
}
