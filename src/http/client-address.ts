/**
 * The address a request comes from, for the rate budget of callers nothing else identifies.
 * Behind a reverse proxy every connection comes from the proxy, so the proxy's
 * `X-Forwarded-For` is read, but only the hops added by proxies the app names as trusted
 * (`http.trustProxy`): a client can send that header itself. proxy-addr (Express's) walks the
 * list from the connection outwards and stops at the first address it does not trust.
 */
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';

/** What the HTTP server knows of the connection a request came on. */
export interface ClientConnection {
  readonly remoteAddress?: string;
}

/**
 * Proxies whose `X-Forwarded-For` is believed: IP addresses, CIDR ranges, or proxy-addr's
 * names `loopback`, `linklocal` and `uniquelocal`. Default: none.
 */
export type TrustProxy = string | readonly string[];

export type ClientAddressResolver = (headers: Headers, connection: ClientConnection | undefined) => string | undefined;

/** Throws a `RangeError` naming the entry when `trustProxy` holds something that is not an address or range. */
export function clientAddressResolver(trustProxy: TrustProxy | undefined): ClientAddressResolver {
  const entries = typeof trustProxy === 'string' ? [trustProxy] : [...(trustProxy ?? [])];
  let trusted: (address: string, hop: number) => boolean;
  try {
    trusted = proxyAddr.compile(entries);
  } catch (error) {
    throw new RangeError(
      `http.trustProxy (TRUST_PROXY) must list IP addresses, CIDR ranges, loopback, linklocal or uniquelocal: ${(error as Error).message}`,
    );
  }
  return (headers, connection) => {
    const remoteAddress = connection?.remoteAddress;
    if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return undefined;
    if (entries.length === 0) return remoteAddress;
    const forwardedFor = headers.get('x-forwarded-for');
    // proxy-addr reads just these two fields of a request.
    const request = {
      socket: { remoteAddress },
      headers: forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor },
    } as unknown as IncomingMessage;
    return proxyAddr(request, trusted);
  };
}

/** Whether `host` (a host name, or an IPv4/IPv6 address, bracketed or not) is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

/** Who holds a budget or a quota slot: the principal, else the address it comes from. */
export interface CallerIdentity {
  readonly principal: string | null;
  /** The client's address (HTTP; see `clientAddressResolver`), for callers without a principal. */
  readonly clientAddress?: string;
}

/** The key a caller's counters live under: callers with neither principal nor address share one. */
export function identityKey(who: CallerIdentity): string {
  if (who.principal !== null) return `p:${who.principal}`;
  return who.clientAddress === undefined ? 'anonymous' : `a:${addressBudget(who.clientAddress)}`;
}

/**
 * The budget an address counts against. An IPv6 client usually holds a whole /64 and may use
 * any address in it, so a /64 is one budget; an IPv4 address, mapped into IPv6 or not, is one.
 * Something that is not an address (a proxy's garbage) is a budget of its own.
 */
export function addressBudget(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}
