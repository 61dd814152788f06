/**
 * WHMCS's access checks, in its order: IP ban → access key / IP allow-list → authentication →
 * (the action must exist) → API role. Every denial is HTTP 403 with a JSON body.
 */
import { normalizeActionName, scalarParam, type FormArray } from './protocol.js';

export interface AccessOptions {
  identifier: string;
  secret: string;
  /** `$api_access_key`: a correct `accesskey` skips the IP allow-list, a wrong one is refused. */
  accessKey?: string;
  /** The API IP allow-list; absent means every address may call. */
  allowedIps?: string[];
  /** Ban an address after this many failed authentications (off when absent). */
  banAfterFailures?: number;
  /** The API role: actions outside it get "Invalid Permissions" (absent means all actions). */
  allowedActions?: string[];
}

export class AccessControl {
  private readonly failures = new Map<string, number>();
  private readonly banned = new Set<string>();
  private readonly allowedActions: Set<string> | undefined;

  constructor(private readonly options: AccessOptions) {
    this.allowedActions = options.allowedActions && new Set(options.allowedActions.map(normalizeActionName));
  }

  /** The denial message for this caller, or undefined when it is authenticated. */
  authenticate(params: FormArray, ip: string): string | undefined {
    if (this.banned.has(ip)) return 'IP Banned';
    const network = this.networkDenial(params, ip);
    if (network) return network;
    const credentials = this.credentialsDenial(params);
    if (credentials) this.recordFailure(ip);
    return credentials;
  }

  /** The denial message when the role does not include the action. */
  authorize(action: string): string | undefined {
    if (!this.allowedActions || this.allowedActions.has(action)) return undefined;
    return `Invalid Permissions: API action "${action}" is not allowed`;
  }

  private networkDenial(params: FormArray, ip: string): string | undefined {
    const sentKey = scalarParam(params, 'accesskey');
    if (this.options.accessKey !== undefined && sentKey !== undefined) {
      return sentKey === this.options.accessKey ? undefined : 'Invalid Access Key';
    }
    if (this.options.allowedIps && !this.options.allowedIps.includes(ip)) return `Invalid IP ${ip}`;
    return undefined;
  }

  private credentialsDenial(params: FormArray): string | undefined {
    // identifier/secret may also arrive in the legacy username/password fields.
    const identifier = scalarParam(params, 'identifier') ?? scalarParam(params, 'username');
    const secret = scalarParam(params, 'secret') ?? scalarParam(params, 'password');
    if (!identifier || !secret) return 'Invalid or missing credentials';
    if (identifier !== this.options.identifier || secret !== this.options.secret) return 'Authentication Failed';
    return undefined;
  }

  private recordFailure(ip: string): void {
    const limit = this.options.banAfterFailures;
    if (limit === undefined) return;
    const count = (this.failures.get(ip) ?? 0) + 1;
    this.failures.set(ip, count);
    if (count >= limit) this.banned.add(ip);
  }
}
