/**
 * Which webhook URLs a reseller may register (contract §6, reference §1.5 rules S1–S3). Pure: the
 * DNS lookup is injected, so registration can resolve the host and tests need no network. This is
 * the registration-time check; delivery re-checks every address it connects to.
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Returns every address (A and AAAA) the host name resolves to. */
export type ResolveHost = (hostname: string) => Promise<readonly string[]>;

/** The name servers did not answer in time. */
export class HostLookupTimeoutError extends Error {}

export interface DnsResolverOptions {
  /** Name servers (`ip` or `ip:port`); the system's when absent. */
  servers?: string[];
  /** Time for the first try; c-ares doubles it on each further try. */
  timeoutMs?: number;
  tries?: number;
}

/** Answers that only mean "no address of this family". */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * A ResolveHost on c-ares with a time limit (1 s, then 2 s: at most about 3 s by default). Unlike
 * dns.lookup, it does not wait on Node's small thread pool, which file writes (the audit log)
 * share, and a silent name server cannot hold a registration open.
 */
export function dnsResolver(options: DnsResolverOptions = {}): (hostname: string) => Promise<string[]> {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 1000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  const family = async (lookup: Promise<string[]>): Promise<string[]> => {
    try {
      return await lookup;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ETIMEOUT') throw new HostLookupTimeoutError('DNS lookup timed out', { cause: error });
      if (code !== undefined && NO_ADDRESS.has(code)) return [];
      throw error;
    }
  };
  // One family failing (timed out, or SERVFAIL/NOTIMP/REFUSED: RFC 4074's broken AAAA servers)
  // while the other answered addresses is that answer: delivery connects only to an address it
  // checked (transport.ts), so the unanswered family is never used. Such a name server otherwise
  // refused the URL and failed every delivery.
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([family(resolver.resolve4(hostname)), family(resolver.resolve6(hostname))]);
    const answered = [v4, v6].flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
    const failed = [v4, v6].find((result) => result.status === 'rejected');
    if (failed && answered.length === 0) throw failed.reason;
    return answered;
  };
}

export interface WebhookUrlOptions {
  /** When given, every address the host resolves to must be public too. Bound its time (see dnsResolver). */
  resolve?: ResolveHost;
  /**
   * Sandbox only (config `webhooks.allowPrivateTargets`): http, any port, and loopback, private and
   * local hosts are accepted, so a developer can receive on 127.0.0.1. Link-local and cloud metadata
   * targets are still refused (isAllowedPrivateTarget), and everything else still holds.
   */
  allowPrivateTargets?: boolean;
  /** The ports a URL may use (config `webhooks.allowedPorts`); 443 only when not given. */
  allowedPorts?: readonly number[];
}

export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Every allocated global IPv6 address lies in 2000::/3. ipaddr.js calls anything it has no name for
 * `unicast`, including IPv4-compatible forms such as `::7f00:1`, so IPv6 is held to this block.
 */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** Names of cloud metadata services: refused even where local hosts are allowed. */
const METADATA_HOSTNAMES = new Set(['metadata', 'metadata.google.internal']);

/** Exact names that reach the machine itself or a cloud metadata service. */
const BLOCKED_HOSTNAMES = new Set(['localhost', ...METADATA_HOSTNAMES]);

/** Suffixes that only ever name hosts on a local or provider-internal network. */
const BLOCKED_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.home.arpa'];

/** A DNS label: letters, digits, hyphens (not at either end); underscores as some real names use. */
const DNS_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Reference S1: 443 only, unless an explicit allow-list is configured. */
export const DEFAULT_WEBHOOK_PORTS: readonly number[] = [443];

const NON_PUBLIC_REASON = 'URL must not point at a loopback, private, link-local or other non-public address';

/**
 * The address in its canonical spelling only (`2130706433` or `0x7f.1` are URL syntax, not
 * addresses), IPv4-mapped IPv6 as the IPv4 address it carries; undefined for anything else.
 */
function parsedAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (isIP(ip) === 0) return undefined;
  try {
    return ipaddr.process(ip);
  } catch {
    return undefined;
  }
}

/**
 * True only for a public unicast address in plain textual form. Loopback, private, link-local,
 * unique-local, CGNAT, unspecified, broadcast, multicast, reserved and documentation ranges are
 * refused, and so is every form that embeds an IPv4 address in IPv6 (NAT64, 6to4, Teredo), whatever
 * it embeds. IPv4-mapped IPv6 is judged as the IPv4 address it carries.
 */
export function isPublicAddress(ip: string): boolean {
  const address = parsedAddress(ip);
  if (address === undefined || address.range() !== 'unicast') return false;
  if (address.kind() === 'ipv4') return true;
  const ipv6 = address as ipaddr.IPv6;
  // A zone only makes sense on link-local addresses; on anything else it is a trick.
  return ipv6.zoneId === undefined && ipv6.match(IPV6_GLOBAL_UNICAST);
}

/** What a developer's receiver may be besides a public address: this machine, the LAN, a VPN (100.64/10). */
const LOCAL_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

/** Cloud metadata services outside link-local (reference §1.5.2): AWS IMDS over IPv6, Alibaba Cloud's. */
const METADATA_ADDRESSES = new Set(['fd00:ec2::254', '100.100.100.200'].map((ip) => ipaddr.parse(ip).toNormalizedString()));

/**
 * With `allowPrivateTargets`: a public address, or a loopback, private, unique-local or CGNAT one.
 * Link-local (169.254.0.0/16, where the cloud metadata service answers, and fe80::/10), the metadata
 * addresses outside it, and every other range stay refused (contract §6), IPv4-mapped IPv6 judged as
 * the IPv4 address it carries: the flag is for a developer's receiver, not the host's cloud.
 */
export function isAllowedPrivateTarget(ip: string): boolean {
  if (isPublicAddress(ip)) return true;
  const address = parsedAddress(ip);
  if (address === undefined) return false;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).zoneId !== undefined) return false;
  return LOCAL_RANGES.has(address.range()) && !METADATA_ADDRESSES.has(address.toNormalizedString());
}

/**
 * Checks a webhook URL. The reasons are short sentences that may be shown to the client. On success
 * `url` is the parsed URL; store `url.href`, the normalised form that was checked.
 */
export async function checkWebhookUrl(raw: string, options: WebhookUrlOptions = {}): Promise<WebhookUrlCheck> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return refuse(`URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // URL parsing silently strips tabs, newlines and surrounding spaces; refuse them rather than guess.
  if (/[\u0000-\u0020\u007f]/.test(raw)) return refuse('URL must not contain spaces or control characters');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('URL is not a valid absolute URL');
  }

  const privateTargets = options.allowPrivateTargets === true;
  if (url.protocol !== 'https:' && !(privateTargets && url.protocol === 'http:')) return refuse('URL must use https');
  if (url.username !== '' || url.password !== '') return refuse('URL must not contain a username or password');
  if (url.hash !== '') return refuse('URL must not contain a fragment');
  // Percent-encoding and punycode can lengthen the URL, and the normalised form is what gets stored.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) return refuse(`URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (privateTargets) return checkPrivateTarget(url, options.resolve);
  const ports = options.allowedPorts ?? DEFAULT_WEBHOOK_PORTS;
  if (!isAllowedPort(url, ports)) return refuse(ports.length === 1 ? `URL port must be ${ports[0]}` : `URL port must be one of ${ports.join(', ')}`);

  // An https URL always has a host (the parser refuses one without), and IPv4 in any spelling has
  // already been normalised to dotted decimal; IPv6 keeps its brackets.
  const host = url.hostname;
  const literal = host.startsWith('[') ? host.slice(1, -1) : isIP(host) === 4 ? host : null;
  if (literal !== null) return isPublicAddress(literal) ? { ok: true, url } : refuse(NON_PUBLIC_REASON);

  const hostnameProblem = checkHostname(host);
  if (hostnameProblem !== null) return refuse(hostnameProblem);

  if (options.resolve !== undefined) {
    let addresses: readonly string[];
    try {
      addresses = await options.resolve(host);
    } catch (error) {
      if (error instanceof HostLookupTimeoutError) return refuse('URL host could not be resolved in time; try again');
      return refuse('URL host could not be resolved');
    }
    if (addresses.length === 0) return refuse('URL host could not be resolved');
    if (!addresses.every(isPublicAddress)) return refuse('URL host resolves to a non-public address');
  }
  return { ok: true, url };
}

const PRIVATE_TARGET_REASON = 'URL must point at a public, loopback or private address, not a link-local or cloud metadata one';

/**
 * The host check with `allowPrivateTargets`: loopback, LAN and local names pass; a link-local or
 * metadata target does not. A name that does not resolve now is left to the delivery, which resolves
 * it again and checks every address (as registration did not resolve names in this mode before).
 */
async function checkPrivateTarget(url: URL, resolve: ResolveHost | undefined): Promise<WebhookUrlCheck> {
  const host = url.hostname;
  const literal = host.startsWith('[') ? host.slice(1, -1) : isIP(host) === 4 ? host : null;
  if (literal !== null) return isAllowedPrivateTarget(literal) ? { ok: true, url } : refuse(PRIVATE_TARGET_REASON);
  if (METADATA_HOSTNAMES.has(host.endsWith('.') ? host.slice(0, -1) : host)) return refuse(PRIVATE_TARGET_REASON);
  const addresses = resolve === undefined ? [] : await resolve(host).catch((): readonly string[] => []);
  return addresses.every(isAllowedPrivateTarget) ? { ok: true, url } : refuse('URL host resolves to a link-local, cloud metadata or other non-local address');
}

/** Whether the URL's port (443 when it has none: URL drops the https default) is in the list. */
export function isAllowedPort(url: URL, allowedPorts: readonly number[]): boolean {
  const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
  return allowedPorts.includes(port);
}

/** Returns why a (lower-cased, punycoded) host name is refused, or null when it is acceptable. */
function checkHostname(host: string): string | null {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) return 'URL host is not a valid host name';
  if (BLOCKED_HOSTNAMES.has(name) || BLOCKED_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    return 'URL host must not be a local or internal name';
  }
  // A single label is resolved through the search domains of whoever looks it up: an internal name.
  if (labels.length < 2) return 'URL host must be a fully qualified domain name';
  return null;
}

function refuse(reason: string): WebhookUrlCheck {
  return { ok: false, reason };
}
