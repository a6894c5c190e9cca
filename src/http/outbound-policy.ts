import type { Agent } from 'node:http';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { ValidationError } from '../errors.js';

// Where the gateway may send requests made for a user-supplied URL (task targets, scheduler HTTP targets, webhooks,
// chat and push endpoints): to public addresses only. Loopback, private, link-local, unique-local, multicast,
// unspecified and other special-purpose addresses are refused, after DNS resolution and at connect time (request-
// filtering-agent checks the address the socket is about to use, so DNS rebinding does not pass), unless
// OUTBOUND_ALLOW names the host or its address (hosts, IP addresses or CIDRs). A literal address is refused already
// when the URL is given, with the rule named; a name that resolves to a refused address fails the attempt.

const AGENT_OPTIONS = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' as const };

/** What request-filtering-agent says when it refuses an address (its errors carry no code). */
const REFUSED_BY_AGENT = /^DNS lookup .* is not allowed\./;

export class OutboundPolicy {
  private readonly hosts: ReadonlySet<string>;
  private readonly addresses: readonly string[];
  /** OUTBOUND_ALLOW's addresses and CIDRs, parsed once: a webhook's literal address is judged on every request. */
  private readonly allowedRanges: readonly AllowedRange[];
  private readonly filtering: { http: Agent; https: Agent };
  private readonly trusted: { http: Agent; https: Agent };

  /** `allow`: host names (exact, case-insensitive), IP addresses or CIDRs. */
  constructor(readonly allow: readonly string[] = []) {
    this.addresses = allow.filter((entry) => isIP(entry) !== 0 || isCidr(entry));
    this.hosts = new Set(allow.filter((entry) => !this.addresses.includes(entry)).map((h) => h.toLowerCase()));
    this.allowedRanges = this.addresses.map(allowedRange);
    const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false, allowIPAddressList: [...this.addresses], denyIPAddressList: [] };
    this.filtering = { http: new RequestFilteringHttpAgent({ ...AGENT_OPTIONS, ...filter }), https: new RequestFilteringHttpsAgent({ ...AGENT_OPTIONS, ...filter }) };
    // Allow-listed hosts are the operator's own: their addresses may be private.
    this.trusted = { http: new RequestFilteringHttpAgent({ ...AGENT_OPTIONS, ...filter, allowPrivateIPAddress: true }), https: new RequestFilteringHttpsAgent({ ...AGENT_OPTIONS, ...filter, allowPrivateIPAddress: true }) };
  }

  /** Parses OUTBOUND_ALLOW: comma- or space-separated hosts, IP addresses and CIDRs. Throws naming a bad entry. */
  static parseAllowList(text: string): string[] {
    const entries = text.split(/[\s,]+/).filter(Boolean);
    for (const entry of entries) {
      const hostLike = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry);
      if (isIP(entry) === 0 && !isCidr(entry) && !hostLike) throw new Error(`"${entry}" is neither a host name, an IP address nor a CIDR`);
    }
    return entries;
  }

  /** The agent a request to `url` must go through. */
  agentFor(url: URL): Agent {
    const agents = this.hosts.has(hostOf(url)) ? this.trusted : this.filtering;
    return url.protocol === 'https:' ? agents.https : agents.http;
  }

  /**
   * Why a URL is refused before any request is made: an address literal (http://127.0.0.1, http://[::1],
   * http://2130706433 ...) or a `localhost` name outside OUTBOUND_ALLOW. Null when the URL may be tried; a name is
   * judged at connect time.
   */
  literalRefusal(url: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return null; // the URL rule of the field reports it
    }
    const host = hostOf(parsed);
    if (this.hosts.has(host)) return null;
    if (host === 'localhost' || host.endsWith('.localhost')) return `targets ${host}, a loopback name; ${RULE}`;
    if (isIP(host) === 0) return null;
    const address = ipaddr.process(host);
    if (this.allowedRanges.some((allowed) => matches(address, allowed))) return null;
    const range = address.range();
    return range === 'unicast' ? null : `targets ${host}, a ${RANGE_NAMES[range] ?? range} address; ${RULE}`;
  }

  /** Throws a ValidationError naming `field` when `url` is refused by literalRefusal. */
  assertAllowed(url: string, field: string): void {
    const refusal = this.literalRefusal(url);
    if (refusal) throw new ValidationError([{ field, message: refusal }]);
  }

  /** Whether an error of a request is this policy refusing the address it resolved to. */
  static isRefusal(error: unknown): boolean {
    return error instanceof Error && REFUSED_BY_AGENT.test(error.message);
  }

  /** The reason of a refused attempt, for the FAILED task, job instance or notification. */
  static describeRefusal(url: string, error: Error): string {
    const address = /^DNS lookup (\S+?)\(/.exec(error.message)?.[1];
    return `refused by the outbound policy: ${new URL(url).hostname} resolves to ${address ?? 'an address'} that is not public; ${RULE}`;
  }
}

const RULE = 'outbound calls go to public addresses only (loopback, private, link-local, unique-local, multicast and unspecified are refused) unless OUTBOUND_ALLOW names the host or address';

const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  carrierGradeNat: 'carrier-grade NAT',
  reserved: 'reserved',
  ipv4Mapped: 'IPv4-mapped',
};

/** The host as compared with OUTBOUND_ALLOW: no IPv6 brackets, no trailing dot (`localhost.` is `localhost`). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** An allowed address is a range of one address (32 or 128 bits). */
type AllowedRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

function allowedRange(entry: string): AllowedRange {
  if (isIP(entry) === 0) return ipaddr.parseCIDR(entry);
  const address = ipaddr.process(entry);
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

function matches(address: ipaddr.IPv4 | ipaddr.IPv6, [range, bits]: AllowedRange): boolean {
  return address.kind() === range.kind() && address.match(range, bits);
}
