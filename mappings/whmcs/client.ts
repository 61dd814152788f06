/**
 * The WHMCS protocol on the shared upstream client (src/upstream): form-encoded POSTs to
 * `<url>/includes/api.php`, credentials in the form, answers `result: "success" | "error"` with
 * HTTP 200, a 403 for every access-control refusal. The per-action policy of actions.ts (deadline,
 * retry, coalescing, caching) is enforced by the shared client; WHMCS's own words only reach
 * `operatorMessage`, with the credentials redacted.
 */
import { BackendError } from '../../src/backend/backend.js';
import type { BackendLogger } from '../../src/backend/logger.js';
import { DETAIL, excerpt, gatewayTimeoutAnswer, isPlainObject, overloadAnswer, parseJsonBody, redactor, unreadableAnswer } from '../../src/upstream/answers.js';
import { createUpstreamClient, type UpstreamCallContext, type UpstreamProtocol } from '../../src/upstream/client.js';
import { type CredentialHold, CredentialRefusal } from '../../src/upstream/credential-hold.js';
import type { Exchange } from '../../src/upstream/exchange.js';
import type { UpstreamAction } from '../../src/upstream/policy.js';
import { upstreamClientOptions, type UpstreamWiring } from '../../src/upstream/settings.js';
import { type ActionId, type ActionTable, declareActions } from './actions.js';
import type { WhmcsConfig } from './config.js';

export type FormScalar = string | number | boolean;
export type FormParams = Readonly<Record<string, FormScalar | readonly FormScalar[] | undefined>>;
/** A successful WHMCS answer (`result: "success"`), not yet checked against its shape. */
export type WhmcsAnswer = Readonly<Record<string, unknown>>;

export { CircuitOpenError } from '../../src/upstream/breaker.js';

export type WhmcsLogger = BackendLogger;

export type WhmcsClientOptions = UpstreamWiring;

export interface WhmcsClient {
  readonly actions: ActionTable;
  call(action: ActionId, params?: FormParams, context?: UpstreamCallContext): Promise<WhmcsAnswer>;
  /** An answer of an unexpected shape: not kept in the cache (UpstreamClient.reject). */
  reject(action: ActionId, params: FormParams, answer: WhmcsAnswer): void;
  /** Shared with the in-gateway doctor's client: its credentials probe is one more login (credential-hold.ts). */
  readonly credentialHold: CredentialHold;
  close(): Promise<void>;
}

/**
 * WHMCS answered `result: "error"` (or GetInvoice's `status: "error"`). The action mapper classifies
 * `upstreamMessage` (credentials redacted: rules quote it to the operator); left unclassified, this is
 * an upstream error.
 */
export class UpstreamBusinessError extends BackendError {
  readonly upstreamMessage: string;

  constructor(upstreamMessage: string, operatorMessage: string) {
    super('upstream_error', DETAIL.business, { operatorMessage });
    this.name = 'UpstreamBusinessError';
    this.upstreamMessage = upstreamMessage;
  }
}

// ---- form encoding --------------------------------------------------------------------------

function formScalar(value: FormScalar): string {
  // PHP truthiness: the string "false" would be true.
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

function isList(value: FormScalar | readonly FormScalar[]): value is readonly FormScalar[] {
  return Array.isArray(value);
}

/** application/x-www-form-urlencoded with PHP array syntax (`pid[0]=1`); repeated keys would keep only the last. */
export function encodeForm(params: FormParams): string {
  // Joined once, so the text is flat: a coalesced call's key and its body stay held while it waits.
  const pairs: string[] = [];
  for (const key in params) {
    const value = params[key];
    if (value === undefined || !Object.hasOwn(params, key)) continue;
    const name = encodeURIComponent(key);
    if (!isList(value)) pairs.push(`${name}=${encodeURIComponent(formScalar(value))}`);
    else for (let index = 0; index < value.length; index++) pairs.push(`${name}[${index}]=${encodeURIComponent(formScalar(value[index] as FormScalar))}`);
  }
  return pairs.join('&');
}

// ---- the client -----------------------------------------------------------------------------

/**
 * WHMCS's refusals of the credentials themselves (Authentication.php): each is a failed login that
 * counts towards a ban of the gateway's address, and "IP Banned" is that ban. Every call would meet
 * them, so the client holds its calls (credential-hold.ts). Not the IP allow-list, the access key or
 * an action's permission: no ban follows, and they are fixed in WHMCS, where a hold would only
 * delay the recovery.
 */
const FAILED_LOGIN = /^(Authentication Failed|Invalid or missing credentials|Invalid administrative identifier|IP Banned)\b/i;
/** "IP Banned" is answered before the credentials are read: not one more failed login. */
const BANNED = /^IP Banned\b/i;
/** Auth.php failedLogin: three failed logins ban the address; the count restarts after 30 minutes without one. */
const WHMCS_LOGIN_BAN = { failures: 3, resetMs: 30 * 60_000 };

function whmcsProtocol(config: WhmcsConfig, actions: ActionTable): UpstreamProtocol<ActionId, FormParams, WhmcsAnswer> {
  const base = new URL(config.url);
  const path = `${base.pathname.replace(/\/+$/, '')}/includes/api.php`;
  const credentials = encodeForm({ identifier: config.identifier, secret: config.secret, accesskey: config.accessKey });
  /** No credential ever reaches a message, even when WHMCS (or a proxy page) echoes the request. */
  const redact = redactor([config.identifier, config.secret, config.accessKey]);

  function read(action: UpstreamAction<ActionId>, { statusCode, headers, body }: Exchange): WhmcsAnswer {
    const parsed = parseJsonBody(body);
    const message = isPlainObject(parsed) && typeof parsed.message === 'string' ? parsed.message : undefined;
    if (statusCode === 403) {
      // WHMCS 8 answers an action it does not know (a custom one not installed) with a 403 as well:
      // that is the action's own answer, which callers classify, not a refusal of the gateway.
      if (message !== undefined && /^invalid api action/i.test(message)) {
        throw new UpstreamBusinessError(redact(message), `WHMCS ${action.name} failed: ${redact(message)}`);
      }
      // Credentials, IP allow-list, access key, role permissions: checked before the action runs.
      const operatorMessage = redact(`WHMCS refused the gateway: ${message ?? excerpt(body, redact)}`);
      if (message !== undefined && FAILED_LOGIN.test(message)) throw new CredentialRefusal(operatorMessage, !BANNED.test(message));
      // WHMCS's own refusal (its error envelope) proves the action did not run: a write's key is
      // free. Another 403 (a proxy's page) proves nothing.
      const own = isPlainObject(parsed) && parsed.result === 'error' && message !== undefined;
      throw new BackendError('upstream_error', DETAIL.refused, { operatorMessage, ...(own ? { notRun: true } : {}) });
    }
    if (statusCode < 200 || statusCode > 299) {
      const why = `HTTP ${statusCode}: ${message ?? excerpt(body, redact)}`;
      // WHMCS has no rate limit, no 503 and no 504 of its own: a proxy or web server in front turned the call away,
      // or (504) gave up waiting for WHMCS.
      if (statusCode === 429 || statusCode === 503) throw overloadAnswer('WHMCS', action, statusCode, headers, why, redact);
      if (statusCode === 504) throw gatewayTimeoutAnswer('WHMCS', action, why, redact);
      // A 5xx can come from a PHP fatal error halfway through the action.
      throw unreadableAnswer('WHMCS', action, why, redact, action.safety === 'write' && statusCode >= 500);
    }
    if (!isPlainObject(parsed)) throw unreadableAnswer('WHMCS', action, `not a JSON object: ${excerpt(body, redact)}`, redact);
    if (parsed.result === 'error' || parsed.status === 'error') {
      const upstreamMessage = redact(message ?? '');
      throw new UpstreamBusinessError(upstreamMessage, `WHMCS ${action.name} failed: ${upstreamMessage}`);
    }
    if (parsed.result !== 'success') throw unreadableAnswer('WHMCS', action, `no result "success": ${excerpt(body, redact)}`, redact);
    return parsed;
  }

  return {
    label: 'WHMCS',
    actions,
    // The health probe: cheap, read-only, the same for every client.
    probe: 'GetCurrencies',
    probeParams: {},
    request: (action, params) => ({
      method: 'POST',
      path,
      // undici decodes no content coding, and without Accept-Encoding any coding is acceptable (RFC 9110).
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'accept-encoding': 'identity' },
      body: `${encodeForm({ action: action.name, ...params, responsetype: 'json' })}&${credentials}`,
    }),
    callKey: (action, params) => `${action.name}?${encodeForm(params)}`,
    read,
    redact,
    loginBan: WHMCS_LOGIN_BAN,
  };
}

export function createWhmcsClient(config: WhmcsConfig, options: WhmcsClientOptions = {}): WhmcsClient {
  const actions = declareActions(config);
  const client = createUpstreamClient(whmcsProtocol(config, actions), upstreamClientOptions(config, options));
  return {
    actions,
    call: (id, params = {}, context) => client.call(id, params, context),
    reject: (id, params, answer) => client.reject(id, params, answer),
    credentialHold: client.credentialHold,
    close: () => client.close(),
  };
}
