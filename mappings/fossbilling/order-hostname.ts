/**
 * A FOSSBilling order's host name. The order holds none of its own: the gateway stores the one it was
 * given in the order's config, and FOSSBilling's checkout stores a hosting order's domain there.
 */
import type { RawOrder } from './parse.js';

const isHostname = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 253;

/**
 * The domain FOSSBilling's own checkout stores for a hosting order (`config.domain`), as its hosting
 * account is named (Servicehosting/Service.php _getDomainTuple: sld then tld, an own domain's tld
 * given a dot when it has none). WHMCS shows every service's domain, however it was ordered.
 */
function checkoutDomain(domain: Record<string, unknown>): string | null {
  const action = domain.action;
  if (action !== 'owndomain' && action !== 'register' && action !== 'transfer') return null;
  const sld = domain[`${action}_sld`];
  const tld = domain[`${action}_tld`];
  if (typeof sld !== 'string' || typeof tld !== 'string' || sld === '' || tld.replace('.', '') === '') return null;
  const name = action === 'owndomain' && !tld.includes('.') ? `${sld}.${tld}` : `${sld}${tld}`;
  return isHostname(name) ? name : null;
}

/** The host name the gateway stored in the order config at order time, else the checkout's domain. */
export function hostnameOf(order: RawOrder): string | null {
  const config = order.config;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return null;
  const { hostname, domain } = config as Record<string, unknown>;
  if (isHostname(hostname)) return hostname;
  return typeof domain === 'object' && domain !== null && !Array.isArray(domain) ? checkoutDomain(domain as Record<string, unknown>) : null;
}
