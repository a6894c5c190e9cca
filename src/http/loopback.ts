// Which names are this machine's loopback interface: the one rule behind AUTH=off (a loopback HOST only), the Host
// header rule that goes with it (src/http/browser-policy.ts), and the plain-HTTP exceptions for a provider on this
// machine (OIDC_ISSUER, its jwks_uri).

const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|\[::1\]|localhost)$/i;

/** Whether a host name or address (127.0.0.0/8, ::1, localhost) is this machine's loopback interface. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host);
}

/** Whether a Host header names the loopback interface, with any port (an IPv6 address in brackets, as a Host writes it). */
export function isLoopbackHostHeader(host: string | null | undefined): boolean {
  if (typeof host !== 'string') return false;
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::\d{1,5})?$/.exec(host);
  return match !== null && isLoopbackHost(match[1]!);
}
