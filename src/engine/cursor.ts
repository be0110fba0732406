/**
 * Opaque list cursors. They encode a position, not an offset, so tasks created or expired
 * between pages neither repeat nor vanish.
 */
import { TaskError } from './errors.js';
import type { ListPosition } from './runtime.js';

const VERSION = 1;

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([VERSION, position.createdAt, position.taskId])).toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(decoded) &&
      decoded.length === 3 &&
      decoded[0] === VERSION &&
      Number.isSafeInteger(decoded[1]) &&
      typeof decoded[2] === 'string'
    ) {
      return { createdAt: decoded[1], taskId: decoded[2] };
    }
  } catch {
    // Fall through to the error below: a cursor that is not ours is invalid, whatever broke.
  }
  throw new TaskError('INVALID_CURSOR', `Invalid cursor: ${JSON.stringify(cursor.slice(0, 64))}`);
}
