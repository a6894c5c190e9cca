import { describe, expect, it } from 'vitest';
import { isLoopbackHost, isLoopbackHostHeader } from '../src/http/loopback.js';

// One loopback rule (src/http/loopback.ts) for a host (HOST, an issuer's or a jwks_uri's host name) and, with a port
// or not, for a Host header (AUTH=off serves only those). Each table is what the two rules it replaced answered.

describe('the loopback rule', () => {
  it('a host: localhost, 127.0.0.0/8 and ::1, bracketed or not; never with a port', () => {
    for (const host of ['localhost', 'LocalHost', '127.0.0.1', '127.1.2.3', '::1', '[::1]']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['', '0.0.0.0', '10.1.2.3', '128.0.0.1', '127.0.0', 'localhost.', 'my.localhost', '::2', '[::1', 'localhost:4000', '127.0.0.1:80', '[::1]:80']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('a Host header: the same names with a port or not; IPv6 bracketed, as a Host header writes it', () => {
    for (const host of ['localhost', 'LOCALHOST:4000', '127.0.0.1', '127.0.0.1:65535', '127.9.9.9:1', '[::1]', '[::1]:4000']) expect(isLoopbackHostHeader(host), host).toBe(true);
    for (const host of [null, undefined, '', '::1', '::1:80', 'localhost:', 'localhost:123456', 'localhost:x', '127.0.0.1.evil', 'evil.example', '[::1', '[::1]x', '[127.0.0.1]', 'me@127.0.0.1']) {
      expect(isLoopbackHostHeader(host), String(host)).toBe(false);
    }
  });
});
