/**
 * Who is calling: the identity a task is bound to (docs/design/decisions.md, decision 6). With an auth
 * principal, tasks belong to it; over stdio, to the local user; over unauthenticated HTTP to
 * nobody, and the unguessable task id is the capability.
 */
import { userInfo } from 'node:os';
import type { AuthInfo } from '@modelcontextprotocol/server';

/**
 * What a `PrincipalResolver` may look at to name the caller: the transport, the verified token
 * (when bearer authentication ran) and, over HTTP, the request headers.
 */
export interface PrincipalSource {
  readonly transport: 'http' | 'stdio';
  /** Set when the request passed bearer authentication (the `auth` option or your own middleware). */
  readonly authInfo?: AuthInfo;
  /** The HTTP request headers (HTTP only). */
  readonly headers?: Headers;
}

/** Returns the principal's id, or `null`/`undefined` when the caller is anonymous. */
export type PrincipalResolver = (
  source: PrincipalSource,
) => string | null | undefined | Promise<string | null | undefined>;

/**
 * The default: the subject of a verified token (`authInfo.extra.sub`, the only `AuthInfo`
 * field it reads) over HTTP, the operating-system user over stdio, and anonymous otherwise.
 * A token without a subject gives no principal, and the HTTP front refuses it (401): a client
 * id names an application, not a user, and every user of one client would share its tasks.
 * An app whose tokens carry the user elsewhere passes its own `resolvePrincipal`. It never
 * trusts a header that nothing verified.
 */
export const defaultPrincipalResolver: PrincipalResolver = (source) => {
  if (source.authInfo) {
    const subject = source.authInfo.extra?.sub;
    return typeof subject === 'string' && subject.length > 0 ? `sub:${subject}` : null;
  }
  return source.transport === 'stdio' ? localUser() : null;
};

function localUser(): string {
  try {
    return `local:${userInfo().username}`;
  } catch {
    return `local:uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

export async function resolvePrincipal(resolver: PrincipalResolver, source: PrincipalSource): Promise<string | null> {
  const principal = await resolver(source);
  return typeof principal === 'string' && principal.length > 0 ? principal : null;
}
