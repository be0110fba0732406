/**
 * A bearer-token verifier backed by a fixed table: for development, tests and fixtures, where
 * an authorization server would be overkill. Each token maps to the subject and client it
 * stands for; an unknown token is refused (401).
 */
import { OAuthError, OAuthErrorCode, type OAuthTokenVerifier } from '@modelcontextprotocol/server';

/** One token of a `tokenTableVerifier` table: whom it stands for and what it may do. */
export interface TokenTableEntry {
  /** The user the token stands for; without it the token names nobody and is refused. */
  readonly sub?: string;
  readonly clientId: string;
  readonly scopes?: readonly string[];
}

/**
 * A verifier for `http.auth.verifier` that accepts exactly the tokens in `table`, each for an
 * hour from the time it is checked; any other token is refused with `invalid_token` (HTTP 401).
 * For development, tests and fixtures; production servers verify tokens from an authorization
 * server instead.
 */
export function tokenTableVerifier(table: Readonly<Record<string, TokenTableEntry>>): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token) {
      const entry = Object.hasOwn(table, token) ? table[token] : undefined;
      if (!entry) throw new OAuthError(OAuthErrorCode.InvalidToken, 'Unknown access token');
      return {
        token,
        clientId: entry.clientId,
        scopes: [...(entry.scopes ?? [])],
        expiresAt: Math.floor(Date.now() / 1000) + 3600,
        ...(entry.sub !== undefined && { extra: { sub: entry.sub } }),
      };
    },
  };
}

/**
 * Reads a token table from JSON (`{"<token>": {"sub": "alice", "clientId": "c1"}, ...}`), as the
 * fixture's `FIXTURE_TOKENS` carries it; a malformed table is an error naming the entry.
 */
export function parseTokenTable(json: string, source = 'the token table'): Record<string, TokenTableEntry> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`${source} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${source} must be an object of token → { sub?, clientId }`);
  }
  const table: Record<string, TokenTableEntry> = {};
  for (const [token, entry] of Object.entries(parsed)) {
    const { sub, clientId } = (entry ?? {}) as { sub?: unknown; clientId?: unknown };
    if (typeof clientId !== 'string' || (sub !== undefined && typeof sub !== 'string')) {
      throw new Error(
        `${source}: the entry of token ${JSON.stringify(token)} needs a string clientId and an optional string sub`,
      );
    }
    table[token] = { clientId, ...(sub !== undefined && { sub }) };
  }
  return table;
}
