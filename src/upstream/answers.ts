/**
 * What every mapping says to clients when the upstream fails (generic `detail` texts: the upstream's
 * own words only ever reach `operatorMessage`), and helpers to describe an unreadable answer for
 * the operator without leaking what it held.
 */
import { BackendError } from '../backend/backend.js';
import type { UpstreamAction } from './policy.js';

export const DETAIL = {
  refused: 'The billing system refused the gateway.',
  unreadable: 'The billing system answered with something unreadable.',
  business: 'The billing system reported an error.',
  unreachable: 'The billing system could not be reached.',
  timeout: 'The billing system did not answer in time.',
  broken: 'The connection to the billing system broke.',
} as const;

/** Removes credentials (and anything else secret) from text bound for the logs. */
export type Redact = (text: string) => string;

const hexEscape = (char: string): string => `%${char.charCodeAt(0).toString(16).toUpperCase()}`;
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#039;' };

/**
 * The forms a secret takes when an upstream echoes it back: as sent; URL-encoded as JavaScript, PHP's
 * rawurlencode and urlencode, and a form encoder write it; HTML-escaped (htmlspecialchars, `'` as
 * `&#039;` or `&#39;`); inside a JSON string (PHP's json_encode also escapes `/`).
 */
function echoes(secret: string): string[] {
  const uri = encodeURIComponent(secret);
  const raw = uri.replace(/[!'()*]/g, hexEscape);
  const html = secret.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);
  const json = JSON.stringify(secret).slice(1, -1);
  return [
    secret,
    uri,
    raw,
    raw.replace(/%20/g, '+').replace(/~/g, hexEscape),
    new URLSearchParams({ s: secret }).toString().slice(2),
    html,
    html.replace(/&#039;/g, '&#39;'),
    json,
    json.replace(/\//g, '\\/'),
  ];
}

/**
 * A Redact that replaces every echo of the secrets (shorter than 3 characters: too common to tell).
 * The echoes are worked out at its first use: most answers are never quoted, so a redactor made
 * per request (the v1 passthrough's, for the account's key) costs nothing until one is.
 */
export function redactor(secrets: ReadonlyArray<string | undefined>): Redact {
  let forms: string[] | undefined;
  return (text) => {
    if (forms === undefined) {
      forms = [...new Set(secrets.flatMap((secret) => (secret === undefined || secret.length < 3 ? [] : echoes(secret))))];
      // Longest first: one form may hold another (a secret with `&` holds it escaped and not).
      forms.sort((a, b) => b.length - a.length);
    }
    return forms.reduce((result, form) => result.split(form).join('[redacted]'), text);
  };
}

/** How much of a body is read to describe it, and how much of that is shown. */
const EXCERPT_WINDOW = 4096;
const EXCERPT_SHOWN = 200;
/** The longest echo of a secret the window's end may cut; that much of a cut window is never shown. */
const LONGEST_ECHO = 512;

/** Where JSON starts within other text: an object or an array opening on a key, a string or another one. */
const JSON_START = /[[{]\s*["[{]/;
/** Control characters no text page holds: UTF-16, a content coding the gateway does not decode, binary. */
const NOT_TEXT = /[\u0000-\u0008\u000e-\u001f]/;

/**
 * What an unreadable body looked like. JSON is never quoted: it may hold a service password or a
 * customer's data, also after other text (PHP's notices printed before an API answer). Nor is what
 * is not UTF-8 text: redaction cannot find a secret in it.
 */
export function excerpt(body: Buffer, redact: Redact): string {
  const window = body.subarray(0, EXCERPT_WINDOW).toString('utf8').replace(/^\uFEFF/, '');
  if (/^\s*[[{"]/.test(window)) return `${body.length} bytes of JSON-like text`;
  if (NOT_TEXT.test(window)) return `${body.length} bytes that are not UTF-8 text`;
  // Redacted whole, before anything is cut: a secret across a cut would show in part. One the
  // window's own end cuts is left unredacted, so the window's tail is dropped.
  const redacted = redact(window);
  const shown = body.length > EXCERPT_WINDOW ? redacted.slice(0, -LONGEST_ECHO) : redacted;
  const json = shown.search(JSON_START);
  const text = `"${(json === -1 ? shown : shown.slice(0, json)).replace(/\s+/g, ' ').trim().slice(0, EXCERPT_SHOWN)}"`;
  return json === -1 ? text : `${text} followed by JSON-like text`;
}

/** An answer we cannot read; from a write it may hide a half-done action. */
export function unreadableAnswer(
  label: string,
  action: UpstreamAction,
  why: string,
  redact: Redact,
  outcomeUnknown = action.safety === 'write',
): BackendError {
  return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage: redact(`${label} ${action.name}: ${why}`), outcomeUnknown });
}

/**
 * The longest an upstream's Retry-After is passed on to clients: the longest the gateway asks of its
 * own (a blocked order while nothing re-runs the doctor checks). A proxy set to "a day" would
 * otherwise stop every integrator that honours it for a day, long after the upstream is back.
 */
export const MAX_UPSTREAM_RETRY_AFTER_MS = 300_000;

/** An upstream's (or its proxy's) Retry-After in delay-seconds, from 1 s to the cap; undefined when absent or not delay-seconds. */
export function upstreamRetryAfterMs(value: string | string[] | undefined): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (text === undefined || !/^\d{1,9}$/.test(text)) return undefined;
  return Math.min(Math.max(1, Number(text)) * 1000, MAX_UPSTREAM_RETRY_AFTER_MS);
}

/**
 * A 429 or 503 that is not the upstream's API answering: a proxy, CDN or web server turning the call
 * away (rate limit, maintenance, no worker free). Unavailable, with its Retry-After. A 429 is a rate
 * limiter's, in front of the panel (neither WHMCS nor FOSSBilling answers one outside its API
 * envelope): a write refused so did not run. A 503 may also come from the origin's own web server
 * once the write is under way (PHP-FPM gone mid-call): its outcome is unknown.
 */
export function overloadAnswer(label: string, action: UpstreamAction, statusCode: 429 | 503, headers: Record<string, string | string[] | undefined>, why: string, redact: Redact): BackendError {
  const retryAfterMs = upstreamRetryAfterMs(headers['retry-after']);
  return new BackendError('unavailable', DETAIL.unreachable, {
    operatorMessage: redact(`${label} ${action.name}: ${why}`),
    outcomeUnknown: action.safety === 'write' && statusCode === 503,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/**
 * A 504 that is not the upstream's API answering: a proxy or load balancer in front of the panel
 * whose origin did not answer in time. As for the gateway's own timeout (upstream_timeout): the
 * call was sent, so a write may have run and its outcome is unknown.
 */
export function gatewayTimeoutAnswer(label: string, action: UpstreamAction, why: string, redact: Redact): BackendError {
  return new BackendError('timeout', DETAIL.timeout, { operatorMessage: redact(`${label} ${action.name}: ${why}`), outcomeUnknown: action.safety === 'write' });
}

/** Once a write has succeeded, any later failure leaves its effect in place: say so. */
export async function afterWrite<T>(work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof BackendError)) throw error;
    throw new BackendError(error.kind, error.detail, {
      operatorMessage: `${error.operatorMessage ?? error.detail} (after ${what} had succeeded)`,
      outcomeUnknown: true,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      cause: error,
    });
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a JSON body (a UTF-8 BOM tolerated); undefined when it is not JSON. */
export function parseJsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
}

/** Node's codes for a TLS certificate that is not trusted, not valid yet or any more, or for another host. */
const UNTRUSTED_CERTIFICATE =
  /\b(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED|ERR_TLS_CERT_ALTNAME_INVALID)\b/;

/**
 * What an operator does about an upstream that gave no usable answer for a reason the URL's text
 * does not show (`doctor`): a certificate the gateway does not trust, or a redirect it does not
 * follow. Undefined for any other failure.
 */
export function connectionFix(message: string, urlSetting: string): string | undefined {
  if (UNTRUSTED_CERTIFICATE.test(message)) {
    return (
      `The gateway does not trust the upstream's TLS certificate (${UNTRUSTED_CERTIFICATE.exec(message)?.[1]}; it verifies every certificate): ` +
      'give the upstream a certificate from a public CA for the host name in the URL, or start the gateway and doctor with ' +
      'NODE_EXTRA_CA_CERTS set to the PEM file of the CA (or of the self-signed certificate) that signed it.'
    );
  }
  if (/\bHTTP 30[1278]\b/.test(message)) {
    return `The upstream answers with a redirect, which the gateway does not follow: set ${urlSetting} to the address it redirects to (https:// where the web server forces it).`;
  }
  return undefined;
}
