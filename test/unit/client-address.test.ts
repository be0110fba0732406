/**
 * Whose rate budget an anonymous request spends: the connection's address, `X-Forwarded-For`
 * only from proxies the app trusts, and a whole IPv6 /64 as one client.
 */
import { describe, expect, it } from 'vitest';
import { addressBudget, clientAddressResolver } from '../../src/http/client-address.js';

const forwarded = (value: string) => new Headers({ 'x-forwarded-for': value });

describe('the client address', () => {
  it("is the connection's address, whatever X-Forwarded-For says, unless a proxy is trusted", () => {
    const resolve = clientAddressResolver(undefined);
    expect(resolve(forwarded('203.0.113.9'), { remoteAddress: '127.0.0.1' })).toBe('127.0.0.1');
    expect(resolve(new Headers(), {})).toBeUndefined();
    expect(resolve(new Headers(), undefined)).toBeUndefined();
  });

  it('comes from X-Forwarded-For only through trusted hops, stopping at the first untrusted one', () => {
    const resolve = clientAddressResolver(['loopback', '10.0.0.0/8']);
    expect(resolve(forwarded('203.0.113.9'), { remoteAddress: '127.0.0.1' })).toBe('203.0.113.9');
    // A client's own X-Forwarded-For entry (left of what the proxies added) is not believed.
    expect(resolve(forwarded('198.51.100.1, 203.0.113.9, 10.1.2.3'), { remoteAddress: '127.0.0.1' })).toBe(
      '203.0.113.9',
    );
    // An untrusted peer's header is ignored.
    expect(resolve(forwarded('203.0.113.9'), { remoteAddress: '192.0.2.7' })).toBe('192.0.2.7');
    expect(resolve(new Headers(), { remoteAddress: '127.0.0.1' })).toBe('127.0.0.1');
  });

  it('refuses a trust list entry that is not an address or range, naming the option', () => {
    expect(() => clientAddressResolver(['my-proxy.internal'])).toThrow(RangeError);
    expect(() => clientAddressResolver('10.0.0.0/99')).toThrow(/http\.trustProxy \(TRUST_PROXY\)/);
  });
});

describe('the budget of an address', () => {
  it('is the IPv4 address, mapped into IPv6 or not', () => {
    expect(addressBudget('192.0.2.7')).toBe('192.0.2.7');
    expect(addressBudget('::ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('is the /64 of an IPv6 address, however it is written', () => {
    expect(addressBudget('2001:db8:1:2::1')).toBe(addressBudget('2001:0db8:0001:0002:ffff:eeee:dddd:cccc'));
    expect(addressBudget('2001:db8:1:2::1')).not.toBe(addressBudget('2001:db8:1:3::1'));
    expect(addressBudget('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
  });
});
