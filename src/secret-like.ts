/**
 * Client text that looks like one of this gateway's secrets (an API key, an admin token, a webhook
 * secret) pasted where an id or a path belongs: logs and audit records show `[redacted]` instead.
 */

/**
 * Text that starts as an API key, an admin token or a webhook secret does (a pasted key, cut or
 * whole), or holds one whole anywhere; an id such as `acme_rk_1` holds none.
 */
const SECRET_LIKE = /^(?:rk_|rgadm_|whsec_)|rk_[0-9a-f]{16}_|rgadm_[A-Za-z0-9_-]{20}|whsec_[A-Za-z0-9+/]{20}/i;

export function looksSecret(text: string): boolean {
  return SECRET_LIKE.test(text);
}

/**
 * Text the client sent (a path segment, an id in a body), fit for a record: control characters
 * removed (before the check, so that none hides a secret from it), replaced whole when it looks
 * like a secret, length bounded.
 */
export function clientText(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '');
  return looksSecret(clean) ? '[redacted]' : clean.slice(0, 200);
}

/**
 * A URL path with every segment that looks like a secret, as sent or percent-decoded, replaced by
 * `[redacted]`. A webhook secret is standard base64, `/` included: from a segment that starts as
 * one, the rest of the path goes too, or the part after its `/` would be kept.
 */
export function redactPath(path: string): string {
  // Most paths hold neither a prefix nor an escape: one test, no split.
  if (!/rk_|rgadm_|whsec_|%/i.test(path)) return path;
  const segments = path.split('/');
  const out: string[] = [];
  for (const segment of segments) {
    const plain = decoded(segment);
    if (!looksSecret(segment) && !looksSecret(plain)) {
      out.push(segment);
      continue;
    }
    out.push('[redacted]');
    if (/whsec_/i.test(segment) || /whsec_/i.test(plain)) break;
  }
  return out.join('/');
}

/** A path segment percent-decoded (`rk%5F…` is `rk_…`); as it is when it is not valid escapes. */
function decoded(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
