/**
 * `doctor` for WHMCS: checks the real upstream before the gateway trusts it. Nothing is changed
 * upstream: reads ask for little, writes are probed with ids WHMCS refuses (doctor-probes.ts).
 * The checks use a client of their own: no cache and no circuit breaker shared with live traffic,
 * and short deadlines (a probe that WHMCS refuses at once needs no 90 s module timeout).
 */
import type { DiagnoseScope, DoctorCheck } from '../../src/backend/backend.js';
import { connectionFix } from '../../src/upstream/answers.js';
import { createWhmcsClient, type WhmcsClient, type WhmcsClientOptions } from './client.js';
import type { WhmcsConfig } from './config.js';
import { FIELD_CHECK, fieldCheck, readCatalog, VISIBLE_CHECK, visibleCheck } from './doctor-order-key.js';
import { inBatches, PROBE_PARAMS, probe, roleGroup, usedActions } from './doctor-probes.js';

const CREDENTIALS_CHECK = { id: 'credentials', title: 'WHMCS accepts the gateway\'s API credentials' } as const;
const ROLE_CHECK = { id: 'api-role', title: 'The API role allows every action the gateway uses' } as const;
const REVOKE_CHECK = { id: 'cancel-revoke', title: 'The custom cancel-revoke action answers' } as const;
const TIME_ZONE_CHECK = { id: 'time-zone', title: 'The WHMCS server time zone is set' } as const;

const AGAIN = 'Fix the cause above and run doctor again.';

/** The longest any one doctor call may take. */
const PROBE_TIMEOUT_MS = 15_000;
/** Probes in flight at once. */
const PROBE_CONCURRENCY = 3;

/** Where WHMCS 8's admin area lists its bans (before 8.0: Setup → Banned IPs). */
const BANNED_IPS = 'Configuration → System Settings → Banned IPs';

/** WHMCS's 403 texts (WHMCS facts §0) and what the operator does about each. */
const REFUSAL_FIXES: ReadonlyArray<[RegExp, string]> = [
  [
    /invalid ip/i,
    'Add the gateway\'s egress IP to WHMCS\'s API IP allow-list (General Settings → Security → API IP Access Restriction), ' +
      'or set WHMCS_ACCESS_KEY to the $api_access_key of WHMCS\'s configuration.php (a correct access key skips the allow-list).',
  ],
  [/invalid access key/i, 'Set WHMCS_ACCESS_KEY (upstream.whmcs.accessKey) to the $api_access_key of WHMCS\'s configuration.php.'],
  [
    /ip banned/i,
    'WHMCS banned the gateway\'s IP after 3 failed logins (for 15 minutes by default), and refuses every call from it ' +
      'meanwhile, even with the right secret. Fix WHMCS_IDENTIFIER / WHMCS_SECRET first, then lift the ban in WHMCS\'s ' +
      `admin area (${BANNED_IPS}: delete the gateway's IP; or delete its row from the tblbannedips table), and add the ` +
      'IP to Whitelisted IPs (System Settings → General Settings → Security) so that it is never banned again.',
  ],
];

const CREDENTIALS_FIX =
  'Set WHMCS_IDENTIFIER and WHMCS_SECRET (upstream.whmcs.identifier / secret) to an API credential from WHMCS ' +
  '(System Settings → Manage API Credentials) whose admin user is active. This run was one failed login: WHMCS bans ' +
  'the gateway\'s IP after 3 failed logins (the count restarts after 30 minutes without one; the gateway\'s own calls ' +
  'with this secret count too), ' +
  `so fix the secret before running doctor again. Once banned (IP Banned), lift it at ${BANNED_IPS}.`;

function doctorClient(config: WhmcsConfig, options: WhmcsClientOptions): WhmcsClient {
  const timeouts = Object.fromEntries(
    Object.entries(config.actionTimeoutsMs).map(([name, ms]) => [name, Math.min(ms, PROBE_TIMEOUT_MS)]),
  );
  return createWhmcsClient(
    {
      ...config,
      timeoutMs: Math.min(config.timeoutMs, PROBE_TIMEOUT_MS),
      actionTimeoutsMs: timeouts,
      connections: PROBE_CONCURRENCY,
      circuitBreaker: { ...config.circuitBreaker, enabled: false },
    },
    options,
  );
}

async function credentialsCheck(client: WhmcsClient, config: WhmcsConfig): Promise<DoctorCheck> {
  const outcome = await probe(client, 'GetCurrencies', PROBE_PARAMS.GetCurrencies);
  switch (outcome.kind) {
    case 'answered':
    case 'denied':
      // A role without GetCurrencies still authenticated the caller; api-role reports the action.
      return { ...CREDENTIALS_CHECK, status: 'pass', detail: `WHMCS at ${config.url} accepted the credentials.` };
    case 'refused': {
      const fix = REFUSAL_FIXES.find(([match]) => match.test(outcome.message))?.[1] ?? CREDENTIALS_FIX;
      return { ...CREDENTIALS_CHECK, status: 'fail', detail: `WHMCS refused the gateway: ${outcome.message}`, fix };
    }
    case 'unknown_action':
    case 'failed':
      return {
        ...CREDENTIALS_CHECK,
        status: 'fail',
        detail: `No usable answer from WHMCS: ${outcome.message}`,
        fix:
          connectionFix(outcome.message, 'upstream.whmcs.url (WHMCS_URL)') ??
          `Check upstream.whmcs.url (WHMCS_URL): it must be the WHMCS root, reachable from the gateway, whose API is ` +
            `${config.url.replace(/\/+$/, '')}/includes/api.php.`,
      };
  }
}

async function roleCheck(client: WhmcsClient, config: WhmcsConfig, scope: DiagnoseScope): Promise<DoctorCheck> {
  const actions = usedActions(config, scope.serviceActions);
  const outcomes = await inBatches(actions, PROBE_CONCURRENCY, async (id) => ({
    id,
    outcome: await probe(client, id, PROBE_PARAMS[id]),
  }));
  const denied = outcomes.filter(({ outcome }) => outcome.kind === 'denied' || outcome.kind === 'unknown_action');
  const unclear = outcomes.filter(({ outcome }) => outcome.kind === 'refused' || outcome.kind === 'failed');
  if (denied.length === 0 && unclear.length === 0) {
    return { ...ROLE_CHECK, status: 'pass', detail: `All ${actions.length} actions are allowed: ${actions.join(', ')}.` };
  }
  const names = denied.map(({ id }) => client.actions[id].name);
  const details = [
    ...(denied.length > 0 ? [`Not allowed: ${names.join(', ')}.`] : []),
    ...unclear.map(({ id, outcome }) => `${client.actions[id].name} could not be checked: ${outcome.message}.`),
  ];
  const grants = denied.map(({ id }) => `${client.actions[id].name} (${roleGroup(id)})`);
  const fixes = [
    ...(denied.length > 0
      ? [`In WHMCS (System Settings → API Roles) allow for the gateway credential's role: ${grants.join(', ')}.`]
      : []),
    ...(unclear.length > 0 ? [AGAIN] : []),
  ];
  return { ...ROLE_CHECK, status: 'fail', detail: details.join(' '), fix: fixes.join(' ') };
}

async function cancelRevokeCheck(client: WhmcsClient, config: WhmcsConfig): Promise<DoctorCheck> {
  const name = config.cancelRevokeAction;
  // Service 0 has no cancellation request: a working action refuses it with its own error.
  const outcome = await probe(client, 'CancelRevoke', { serviceid: 0 });
  const install =
    `Install the custom API action "${name}" (includes/api/${name.toLowerCase()}.php, deleting the service's pending row in ` +
    `tblcancelrequests), register it in the API catalog, allow it in the gateway credential's API role, or set ` +
    `upstream.whmcs.cancelRevokeAction to the name it has.`;
  switch (outcome.kind) {
    case 'answered':
      return { ...REVOKE_CHECK, status: 'pass', detail: `${name} answered a probe for service 0: ${outcome.message}.` };
    case 'unknown_action':
    case 'denied':
      return { ...REVOKE_CHECK, status: 'fail', detail: `${name} is not usable: ${outcome.message}`, fix: install };
    case 'refused':
    case 'failed':
      return { ...REVOKE_CHECK, status: 'fail', detail: `${name} could not be checked: ${outcome.message}`, fix: AGAIN };
  }
}

function timeZoneCheck(config: WhmcsConfig): DoctorCheck {
  if (config.timeZoneConfigured) {
    return { ...TIME_ZONE_CHECK, status: 'pass', detail: `WHMCS times are read as ${config.timeZone}.` };
  }
  return {
    ...TIME_ZONE_CHECK,
    status: 'fail',
    detail: 'upstream.whmcs.timeZone is not set; WHMCS times (order dates, invoice payment times) are read as UTC.',
    fix: 'Set upstream.whmcs.timeZone to the IANA zone of the WHMCS server\'s PHP (date.timezone), e.g. "Europe/London".',
  };
}

function skipped(check: Omit<DoctorCheck, 'status' | 'detail'>, because: string): DoctorCheck {
  return { ...check, status: 'skip', detail: `Not checked: ${because}.` };
}

export async function diagnoseWhmcs(config: WhmcsConfig, scope: DiagnoseScope, options: WhmcsClientOptions = {}): Promise<DoctorCheck[]> {
  const revokeUsed = scope.serviceActions.includes('cancel_revoke');
  const client = doctorClient(config, options);
  try {
    const credentials = await credentialsCheck(client, config);
    if (credentials.status !== 'pass') {
      // Every further call would be one more failed login towards WHMCS's IP ban.
      const because = 'the credentials check failed';
      return [
        credentials,
        skipped(ROLE_CHECK, because),
        skipped(FIELD_CHECK, because),
        skipped(VISIBLE_CHECK, because),
        ...(revokeUsed ? [skipped(REVOKE_CHECK, because)] : []),
        timeZoneCheck(config),
      ];
    }
    const role = await roleCheck(client, config, scope);
    const read = await readCatalog(client);
    const orderKey =
      'failure' in read
        ? [read.failure, skipped(VISIBLE_CHECK, 'the product catalog could not be read')]
        : [fieldCheck(config, read.catalog), await visibleCheck(client, config, read.catalog)];
    const revoke = revokeUsed ? [await cancelRevokeCheck(client, config)] : [];
    return [credentials, role, ...orderKey, ...revoke, timeZoneCheck(config)];
  } finally {
    await client.close();
  }
}
