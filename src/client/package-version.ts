/**
 * This package's version, as its package.json says: what the client (and `mcp-task`) tell a
 * server in `clientInfo`. Read through the package's own name (a self-reference, allowed by
 * `exports["./package.json"]`), so it is the same file from the sources, the build output
 * (`dist/src/client/`, one folder deeper) and an install under node_modules.
 */
import { createRequire } from 'node:module';

/** `version` of mcp-task-server's package.json (`0.0.0` between releases). */
export const PACKAGE_VERSION: string = (
  createRequire(import.meta.url)('mcp-task-server/package.json') as { readonly version: string }
).version;
