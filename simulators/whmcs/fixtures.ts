/**
 * Seed data for the WHMCS simulator. `createSeedState()` returns fresh objects every call, so each
 * simulator instance (and each test) owns its data. Text is stored the way WHMCS stores it
 * (HTML-encoded where it came through admin or API input).
 *
 * Clients: 1 Acme Hosting (USD, credit 25.00), 2 Beta Reseller (EUR), 3 Gamma Cloud (USD, never
 * visible to 1 or 2), 4 Delta (Closed). Products 1–5 are public, 6 hidden, 7 retired.
 */
import {
  CYCLE_MONTHS,
  CYCLES,
  EMPTY_DATE,
  EMPTY_DATETIME,
  SETUP_FEE_KEYS,
  fromCents,
  toCents,
  type Client,
  type ConfigOption,
  type CreditEntry,
  type CancelRequest,
  type Cycle,
  type CyclePricing,
  type Invoice,
  type InvoiceStatus,
  type Order,
  type Product,
  type ProductCustomField,
  type Service,
  type SimulatorState,
  type Transaction,
} from './model.js';

export const IDEMPOTENCY_KEY_FIELD_NAME = 'Gateway Idempotency Key';

// ---- pricing helpers ------------------------------------------------------------------------

const DISABLED = '-1.00';

/** A pricing row with the given cycles enabled; every other cycle is disabled (`-1.00`). */
function cyclePricing(prices: Partial<Record<Cycle, string>>, setupFee = '0.00'): CyclePricing {
  // Key order as WHMCS renders it: the six setup fees, then the six prices.
  const row = {} as CyclePricing;
  for (const cycle of CYCLES) row[SETUP_FEE_KEYS[cycle]] = prices[cycle] === undefined ? '0.00' : setupFee;
  for (const cycle of CYCLES) row[cycle] = prices[cycle] ?? DISABLED;
  return row;
}

/** Config option choices cost the same per month on every cycle. */
function perMonth(monthly: string): CyclePricing {
  const row = {} as CyclePricing;
  for (const cycle of CYCLES) row[SETUP_FEE_KEYS[cycle]] = '0.00';
  for (const cycle of CYCLES) row[cycle] = fromCents(toCents(monthly) * CYCLE_MONTHS[cycle]);
  return row;
}

const free = { USD: perMonth('0.00'), EUR: perMonth('0.00') };

// ---- catalogue ------------------------------------------------------------------------------

function seedConfigOptions(): ConfigOption[] {
  return [
    {
      id: 1,
      name: 'Operating System',
      type: '1',
      minqty: 0,
      maxqty: 0,
      hidden: false,
      choices: [
        // Hidden and listed first, so "first option" and "first visible option" differ.
        { id: 10, rawName: 'centos-7|CentOS 7 (end of life)', hidden: true, pricing: free },
        { id: 11, rawName: 'debian-12|Debian 12', hidden: false, pricing: free },
        { id: 12, rawName: 'ubuntu-24.04|Ubuntu 24.04', hidden: false, pricing: free },
      ],
    },
    {
      id: 2,
      name: 'Extra IPv4 Addresses',
      type: '4',
      minqty: 0,
      maxqty: 4,
      hidden: false,
      choices: [{ id: 21, rawName: 'ipv4|IPv4 address', hidden: false, pricing: { USD: perMonth('2.00'), EUR: perMonth('1.80') } }],
    },
    {
      id: 3,
      name: 'Daily Backups',
      type: '3',
      minqty: 0,
      maxqty: 0,
      hidden: false,
      choices: [{ id: 31, rawName: 'backups|Enabled', hidden: false, pricing: { USD: perMonth('3.00'), EUR: perMonth('2.70') } }],
    },
    {
      id: 4,
      name: 'Location',
      type: '2',
      minqty: 0,
      maxqty: 0,
      hidden: false,
      choices: [
        { id: 41, rawName: 'ams|Amsterdam', hidden: false, pricing: free },
        { id: 42, rawName: 'nyc|New York', hidden: false, pricing: free },
      ],
    },
    {
      id: 5,
      name: 'Memory (GB)',
      type: '4',
      minqty: 2,
      maxqty: 16,
      hidden: false,
      choices: [{ id: 51, rawName: 'ram|GB of RAM', hidden: false, pricing: { USD: perMonth('1.50'), EUR: perMonth('1.35') } }],
    },
  ];
}

function seedProducts(): Product[] {
  return [
    {
      pid: 1,
      gid: 1,
      type: 'server',
      name: 'VPS S',
      slug: 'vps-s',
      description: '2 vCPU\r\n4 GB RAM\r\n<strong>80 GB NVMe</strong>',
      module: 'virtualizor',
      paytype: 'recurring',
      listing: 'public',
      pricing: {
        USD: cyclePricing({ monthly: '9.99', annually: '99.00' }),
        EUR: cyclePricing({ monthly: '8.99', annually: '89.00' }),
      },
      configOptionIds: [1, 2, 3],
    },
    {
      pid: 2,
      gid: 1,
      type: 'server',
      name: 'VPS M',
      slug: 'vps-m',
      description: '4 vCPU\r\n8 GB RAM\r\n160 GB NVMe',
      module: 'virtualizor',
      paytype: 'recurring',
      listing: 'public',
      pricing: {
        USD: cyclePricing({ monthly: '19.99', quarterly: '57.00', annually: '199.00' }),
        EUR: cyclePricing({ monthly: '17.99', quarterly: '51.00', annually: '179.00' }),
      },
      configOptionIds: [1, 2, 3],
    },
    {
      pid: 3,
      gid: 1,
      type: 'server',
      name: 'VPS L',
      slug: 'vps-l',
      description: '8 vCPU, memory as configured, 320 GB NVMe',
      module: 'solusvmpro',
      paytype: 'recurring',
      listing: 'public',
      pricing: {
        USD: cyclePricing({ monthly: '39.99', semiannually: '219.00', annually: '399.00', biennially: '749.00' }, '10.00'),
        EUR: cyclePricing({ monthly: '35.99', semiannually: '199.00', annually: '359.00', biennially: '679.00' }, '9.00'),
      },
      configOptionIds: [1, 4, 5],
    },
    {
      pid: 4,
      gid: 2,
      type: 'hostingaccount',
      // Entered in admin with a raw "&", so stored (and returned) entity-encoded.
      name: 'Web Hosting Starter &amp; Mail',
      slug: 'web-hosting-starter',
      description: '<ul><li>10 GB SSD</li><li>5 mailboxes</li></ul>',
      module: 'cpanel',
      paytype: 'recurring',
      listing: 'public',
      pricing: {
        // Monthly is disabled: a monthly order silently falls back to annually.
        USD: cyclePricing({ annually: '49.00', biennially: '89.00' }),
        EUR: cyclePricing({ annually: '45.00', biennially: '82.00' }),
      },
      configOptionIds: [],
    },
    {
      pid: 5,
      gid: 3,
      type: 'other',
      name: 'Setup Assistance',
      slug: 'setup-assistance',
      description: 'One hour of hands-on server setup by our staff.',
      module: '',
      paytype: 'onetime',
      listing: 'public',
      pricing: {
        USD: cyclePricing({ monthly: '49.00' }),
        EUR: cyclePricing({ monthly: '45.00' }),
      },
      configOptionIds: [],
    },
    {
      pid: 6,
      gid: 1,
      type: 'server',
      name: 'Free Trial VPS',
      slug: 'free-trial-vps',
      description: '1 vCPU, 1 GB RAM, 14 days.',
      module: 'virtualizor',
      paytype: 'free',
      listing: 'hidden',
      pricing: { USD: cyclePricing({ monthly: '0.00' }), EUR: cyclePricing({ monthly: '0.00' }) },
      configOptionIds: [1],
    },
    {
      pid: 7,
      gid: 4,
      type: 'server',
      name: 'VPS Legacy 2019',
      slug: 'vps-legacy-2019',
      description: 'Retired plan, kept for existing customers.',
      module: 'solusvmpro',
      paytype: 'recurring',
      listing: 'retired',
      pricing: {
        USD: cyclePricing({ monthly: '14.99', annually: '149.00' }),
        EUR: cyclePricing({ monthly: '13.99', annually: '139.00' }),
      },
      configOptionIds: [1],
    },
  ];
}

function seedCustomFields(): ProductCustomField[] {
  const idempotencyKey = (id: number, productId: number): ProductCustomField => ({
    id,
    productId,
    name: IDEMPOTENCY_KEY_FIELD_NAME,
    description: 'Set by the reseller gateway; do not edit.',
    required: false,
    showOnOrder: true,
  });
  const sshKey = (id: number, productId: number): ProductCustomField => ({
    id,
    productId,
    name: 'SSH Key',
    description: 'Public key installed for root',
    required: false,
    showOnOrder: true,
  });
  return [
    sshKey(1, 1),
    idempotencyKey(2, 1),
    sshKey(3, 2),
    idempotencyKey(4, 2),
    idempotencyKey(5, 3),
    { id: 6, productId: 3, name: 'Rack Position', description: 'Admin only', required: false, showOnOrder: false },
    idempotencyKey(7, 6),
    idempotencyKey(8, 7),
    // Every public product carries the field: the gateway refuses to order a product without it.
    idempotencyKey(9, 4),
    idempotencyKey(10, 5),
  ];
}

// ---- clients and their records --------------------------------------------------------------

function seedClients(): Client[] {
  const client = (id: number, fields: Omit<Client, 'id' | 'groupid' | 'language' | 'users'>): Client => ({
    id,
    groupid: 0,
    language: '',
    users: [{ id, name: `${fields.firstname} ${fields.lastname}`, email: fields.email, isOwner: true }],
    ...fields,
  });
  return [
    client(1, {
      uuid: '3f9b2c1e-0a41-4d8e-9c55-0000000000a1',
      firstname: 'Alice',
      lastname: 'Archer',
      companyname: 'Acme Hosting',
      email: 'alice@acme.example',
      countrycode: 'US',
      status: 'Active',
      currencyId: 1,
      credit: '25.00',
    }),
    client(2, {
      uuid: '7d2e4a90-5b13-4f6c-8e21-0000000000b2',
      firstname: 'Bruno',
      lastname: 'Becker',
      companyname: 'Beta Reseller',
      email: 'bruno@beta.example',
      countrycode: 'DE',
      status: 'Active',
      currencyId: 2,
      credit: '0.00',
    }),
    client(3, {
      uuid: 'c4a8f3d2-9e67-4b0a-a3f4-0000000000c3',
      firstname: 'Greta',
      lastname: 'O&#039;Neil',
      companyname: 'Gamma Cloud &amp; Co',
      email: 'greta@gamma.example',
      countrycode: 'GB',
      status: 'Active',
      currencyId: 1,
      credit: '100.00',
    }),
    client(4, {
      uuid: 'e1b7d6c5-2f38-4a9b-b7c6-0000000000d4',
      firstname: 'Dan',
      lastname: 'Dorn',
      companyname: 'Delta Closed Ltd',
      email: 'dan@delta.example',
      countrycode: 'US',
      status: 'Closed',
      currencyId: 1,
      credit: '0.00',
    }),
  ];
}

type ServiceSeed = Pick<
  Service,
  'id' | 'clientId' | 'orderId' | 'pid' | 'status' | 'billingcycle' | 'regdate' | 'nextduedate' | 'recurringamount'
> &
  Partial<Service>;

const SERVER_BY_PRODUCT: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 3, 5: 0, 6: 1, 7: 2 };

function service(seed: ServiceSeed): Service {
  return {
    serverId: SERVER_BY_PRODUCT[seed.pid] ?? 0,
    domain: '',
    dedicatedip: '',
    assignedips: '',
    suspensionreason: '',
    firstpaymentamount: seed.recurringamount,
    paymentmethod: 'banktransfer',
    username: '',
    password: '',
    notes: '',
    power: seed.status === 'Active' ? 'on' : 'off',
    customFieldValues: {},
    configOptionValues: {},
    ...seed,
  };
}

/** VPS S/M options: OS, extra IPv4 count, backups on/off. */
const smallVpsOptions = (os: number, ips = 0, backups = 0): Record<string, number> => ({ 1: os, 2: ips, 3: backups });
/** VPS L options: OS, location, memory GB. */
const largeVpsOptions = (os: number, location: number, memory: number): Record<string, number> => ({ 1: os, 4: location, 5: memory });

function seedServices(): Service[] {
  return [
    // ---- client 1, Acme Hosting (USD) ----
    service({
      id: 1,
      clientId: 1,
      orderId: 1,
      pid: 1,
      status: 'Active',
      billingcycle: 'Monthly',
      regdate: '2025-06-01',
      nextduedate: '2026-12-01',
      recurringamount: '16.99',
      domain: 'vps1.acme.example',
      dedicatedip: '198.51.100.10',
      assignedips: '198.51.100.11\n198.51.100.12',
      username: 'root',
      // Special characters on purpose: they must come back through the JSON escaping intact.
      password: `Vq7&x<9'Lm"z`,
      notes: 'Customer asked for reverse DNS; internal ticket #4411.',
      customFieldValues: { 1: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAcme alice@acme', 2: '' },
      configOptionValues: smallVpsOptions(11, 2, 1),
    }),
    service({
      id: 2,
      clientId: 1,
      orderId: 2,
      pid: 2,
      status: 'Suspended',
      billingcycle: 'Quarterly',
      regdate: '2025-07-01',
      nextduedate: '2026-10-01',
      recurringamount: '57.00',
      domain: 'vps2.acme.example',
      dedicatedip: '198.51.100.20',
      username: 'root',
      password: 'Acme-Vps2-Pass',
      suspensionreason: 'Overdue on Payment',
      configOptionValues: smallVpsOptions(12),
    }),
    service({
      id: 3,
      clientId: 1,
      orderId: 3,
      pid: 3,
      status: 'Pending',
      billingcycle: 'Monthly',
      regdate: '2026-11-20',
      nextduedate: '2026-11-20',
      recurringamount: '45.99',
      firstpaymentamount: '55.99',
      domain: 'vps3.acme.example',
      configOptionValues: largeVpsOptions(11, 41, 4),
    }),
    service({
      id: 4,
      clientId: 1,
      orderId: 4,
      pid: 1,
      status: 'Terminated',
      billingcycle: 'Monthly',
      regdate: '2024-01-10',
      nextduedate: '2025-03-10',
      recurringamount: '9.99',
      domain: 'old.acme.example',
      dedicatedip: '198.51.100.30',
      username: 'root',
      password: 'Old-Acme-Pass',
      configOptionValues: smallVpsOptions(12),
    }),
    service({
      id: 5,
      clientId: 1,
      orderId: 5,
      pid: 4,
      status: 'Cancelled',
      billingcycle: 'Annually',
      regdate: '2024-02-01',
      nextduedate: '2025-02-01',
      recurringamount: '49.00',
      domain: 'acme-shop.example',
      username: 'acmeshop',
      password: 'Shop-Pass-1',
    }),
    service({
      id: 6,
      clientId: 1,
      orderId: 6,
      pid: 1,
      status: 'Fraud',
      billingcycle: 'Monthly',
      regdate: '2025-09-05',
      nextduedate: '2025-09-05',
      recurringamount: '9.99',
      domain: 'suspicious.acme.example',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 7,
      clientId: 1,
      orderId: 7,
      pid: 5,
      status: 'Completed',
      billingcycle: 'One Time',
      regdate: '2025-04-01',
      nextduedate: EMPTY_DATE,
      firstpaymentamount: '49.00',
      recurringamount: '0.00',
    }),
    service({
      id: 8,
      clientId: 1,
      orderId: 7,
      pid: 6,
      status: 'Active',
      billingcycle: 'Free Account',
      regdate: '2025-04-01',
      nextduedate: EMPTY_DATE,
      recurringamount: '0.00',
      domain: 'trial.acme.example',
      dedicatedip: '198.51.100.40',
      username: 'root',
      password: 'Trial-Pass-8',
      configOptionValues: { 1: 11 },
    }),
    service({
      id: 9,
      clientId: 1,
      orderId: 8,
      pid: 3,
      status: 'Active',
      billingcycle: 'Semi-Annually',
      regdate: '2025-08-15',
      nextduedate: '2027-02-15',
      recurringamount: '237.00',
      firstpaymentamount: '247.00',
      domain: 'db1.acme.example',
      dedicatedip: '198.51.100.50',
      username: 'root',
      password: 'Acme-Db1-Pass',
      paymentmethod: 'paypal',
      configOptionValues: largeVpsOptions(12, 42, 2),
    }),
    // ---- client 2, Beta Reseller (EUR) ----
    service({
      id: 10,
      clientId: 2,
      orderId: 9,
      pid: 1,
      status: 'Active',
      billingcycle: 'Monthly',
      regdate: '2025-05-10',
      nextduedate: '2026-12-10',
      recurringamount: '8.99',
      domain: 'web.beta.example',
      dedicatedip: '203.0.113.10',
      username: 'root',
      password: 'Beta-Web-Pass',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 11,
      clientId: 2,
      orderId: 10,
      pid: 3,
      status: 'Suspended',
      billingcycle: 'Monthly',
      regdate: '2025-06-12',
      nextduedate: '2026-10-12',
      recurringamount: '38.69',
      firstpaymentamount: '47.69',
      domain: 'db.beta.example',
      dedicatedip: '203.0.113.11',
      username: 'root',
      password: 'Beta-Db-Pass',
      suspensionreason: 'Overdue on Payment',
      configOptionValues: largeVpsOptions(11, 41, 2),
    }),
    service({
      id: 12,
      clientId: 2,
      orderId: 11,
      pid: 2,
      status: 'Pending',
      billingcycle: 'Monthly',
      regdate: '2026-11-18',
      nextduedate: '2026-11-18',
      recurringamount: '17.99',
      domain: 'new.beta.example',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 13,
      clientId: 2,
      orderId: 12,
      pid: 2,
      status: 'Terminated',
      billingcycle: 'Quarterly',
      regdate: '2024-05-01',
      nextduedate: '2025-02-01',
      recurringamount: '51.00',
      dedicatedip: '203.0.113.13',
      configOptionValues: smallVpsOptions(12),
    }),
    service({
      id: 14,
      clientId: 2,
      orderId: 13,
      pid: 4,
      status: 'Cancelled',
      billingcycle: 'Annually',
      regdate: '2024-06-01',
      nextduedate: '2025-06-01',
      recurringamount: '45.00',
      domain: 'beta-shop.example',
      username: 'betashop',
    }),
    service({
      id: 15,
      clientId: 2,
      orderId: 14,
      pid: 1,
      status: 'Fraud',
      billingcycle: 'Monthly',
      regdate: '2025-10-01',
      nextduedate: '2025-10-01',
      recurringamount: '8.99',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 16,
      clientId: 2,
      orderId: 15,
      pid: 5,
      status: 'Completed',
      billingcycle: 'One Time',
      regdate: '2025-05-10',
      nextduedate: EMPTY_DATE,
      firstpaymentamount: '45.00',
      recurringamount: '0.00',
    }),
    // ---- client 3, Gamma Cloud (USD): must never show up for clients 1 or 2 ----
    service({
      id: 17,
      clientId: 3,
      orderId: 16,
      pid: 1,
      status: 'Active',
      billingcycle: 'Monthly',
      regdate: '2025-03-03',
      nextduedate: '2026-12-03',
      recurringamount: '9.99',
      domain: 'gamma1.example',
      dedicatedip: '198.51.100.117',
      username: 'root',
      password: 'Gamma-Secret-17',
      notes: 'VIP customer',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 18,
      clientId: 3,
      orderId: 17,
      pid: 2,
      status: 'Suspended',
      billingcycle: 'Monthly',
      regdate: '2025-04-04',
      nextduedate: '2026-09-04',
      recurringamount: '19.99',
      domain: 'gamma2.example',
      dedicatedip: '198.51.100.118',
      suspensionreason: 'Abuse report',
      configOptionValues: smallVpsOptions(12),
    }),
    service({
      id: 19,
      clientId: 3,
      orderId: 18,
      pid: 3,
      status: 'Pending',
      billingcycle: 'Monthly',
      regdate: '2026-11-21',
      nextduedate: '2026-11-21',
      recurringamount: '42.99',
      firstpaymentamount: '52.99',
      domain: 'gamma3.example',
      configOptionValues: largeVpsOptions(11, 42, 2),
    }),
    service({
      id: 20,
      clientId: 3,
      orderId: 19,
      pid: 1,
      status: 'Terminated',
      billingcycle: 'Monthly',
      regdate: '2024-03-03',
      nextduedate: '2025-01-03',
      recurringamount: '9.99',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 21,
      clientId: 3,
      orderId: 20,
      pid: 4,
      status: 'Cancelled',
      billingcycle: 'Annually',
      regdate: '2024-04-04',
      nextduedate: '2025-04-04',
      recurringamount: '49.00',
      domain: 'gamma-shop.example',
    }),
    service({
      id: 22,
      clientId: 3,
      orderId: 21,
      pid: 1,
      status: 'Fraud',
      billingcycle: 'Monthly',
      regdate: '2025-11-11',
      nextduedate: '2025-11-11',
      recurringamount: '9.99',
      configOptionValues: smallVpsOptions(11),
    }),
    service({
      id: 23,
      clientId: 3,
      orderId: 22,
      pid: 5,
      status: 'Completed',
      billingcycle: 'One Time',
      regdate: '2025-03-03',
      nextduedate: EMPTY_DATE,
      firstpaymentamount: '49.00',
      recurringamount: '0.00',
    }),
    // ---- client 4, Delta (Closed) ----
    service({
      id: 24,
      clientId: 4,
      orderId: 23,
      pid: 4,
      status: 'Cancelled',
      billingcycle: 'Annually',
      regdate: '2023-01-01',
      nextduedate: '2024-01-01',
      recurringamount: '49.00',
      domain: 'delta.example',
    }),
  ];
}

function seedOrders(): Order[] {
  const order = (
    id: number,
    clientId: number,
    date: string,
    amount: string,
    invoiceId: number,
    status: string,
    paymentmethod = 'banktransfer',
  ): Order => ({
    id,
    ordernum: 4_100_000_000 + id * 7919,
    clientId,
    date,
    amount,
    paymentmethod,
    invoiceId,
    status,
    promocode: '',
    ipaddress: '198.51.100.200',
    notes: '',
  });
  return [
    order(1, 1, '2025-06-01 10:15:00', '16.99', 1, 'Active'),
    order(2, 1, '2025-07-01 16:02:11', '57.00', 2, 'Active'),
    order(3, 1, '2026-11-20 08:30:00', '55.99', 3, 'Pending'),
    order(4, 1, '2024-01-10 12:00:00', '9.99', 4, 'Active'),
    order(5, 1, '2024-02-01 09:00:00', '49.00', 5, 'Cancelled'),
    order(6, 1, '2025-09-05 23:11:00', '9.99', 6, 'Fraud'),
    order(7, 1, '2025-04-01 14:00:00', '49.00', 7, 'Active'),
    order(8, 1, '2025-08-15 11:45:00', '247.00', 8, 'Active', 'paypal'),
    order(9, 2, '2025-05-10 09:20:00', '8.99', 11, 'Active'),
    order(10, 2, '2025-06-12 13:40:00', '47.69', 12, 'Active'),
    // An admin-defined custom order status.
    order(11, 2, '2026-11-18 17:05:00', '17.99', 14, 'In Review'),
    order(12, 2, '2024-05-01 08:00:00', '51.00', 15, 'Active'),
    order(13, 2, '2024-06-01 08:00:00', '45.00', 16, 'Cancelled'),
    order(14, 2, '2025-10-01 02:14:00', '8.99', 17, 'Fraud'),
    order(15, 2, '2025-05-10 09:25:00', '45.00', 18, 'Active'),
    order(16, 3, '2025-03-03 10:00:00', '9.99', 20, 'Active'),
    order(17, 3, '2025-04-04 10:00:00', '19.99', 21, 'Active'),
    order(18, 3, '2026-11-21 10:00:00', '52.99', 23, 'Pending'),
    order(19, 3, '2024-03-03 10:00:00', '9.99', 24, 'Active'),
    order(20, 3, '2024-04-04 10:00:00', '49.00', 25, 'Cancelled'),
    order(21, 3, '2025-11-11 10:00:00', '9.99', 26, 'Fraud'),
    order(22, 3, '2025-03-03 10:05:00', '49.00', 27, 'Active'),
    order(23, 4, '2023-01-01 10:00:00', '49.00', 29, 'Cancelled'),
  ];
}

interface ItemSeed {
  relid: number;
  description: string;
  amount: string;
}

interface InvoiceExtras {
  credit?: string;
  duedate?: string;
  paymentmethod?: string;
  notes?: string;
}

function plusOneDay(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** Builds an invoice whose totals, payment dates and transactions follow from its status. */
function invoice(id: number, clientId: number, status: InvoiceStatus, date: string, items: ItemSeed[], extras: InvoiceExtras = {}): Invoice {
  const subtotal = items.reduce((sum, item) => sum + toCents(item.amount), 0);
  const credit = toCents(extras.credit ?? '0.00');
  const total = fromCents(subtotal - credit);
  const paidOn = `${plusOneDay(date)} 10:00:00`;
  const wasPaid = status === 'Paid' || status === 'Refunded';
  const gateway = extras.paymentmethod ?? 'banktransfer';
  const payment = { id: 0, userid: clientId, gateway, date: paidOn, fees: '0.00', invoiceid: id, refundid: 0 };
  const transactions: Transaction[] = [];
  if (wasPaid && toCents(total) > 0) {
    transactions.push({ ...payment, description: `Invoice Payment`, amountin: total, amountout: '0.00', transid: `TX-${id}` });
  }
  if (status === 'Refunded') {
    transactions.push({ ...payment, description: `Refund of Transaction ID TX-${id}`, amountin: '0.00', amountout: total, transid: `RF-${id}` });
  }
  return {
    id,
    clientId,
    // Sequential numbering is assigned on payment, so unpaid invoices have none.
    invoicenum: wasPaid ? `${date.slice(0, 4)}-${String(id).padStart(4, '0')}` : '',
    date,
    duedate: extras.duedate ?? date,
    datepaid: wasPaid ? paidOn : EMPTY_DATETIME,
    dateRefunded: status === 'Refunded' ? `${plusOneDay(plusOneDay(date))} 10:00:00` : EMPTY_DATETIME,
    dateCancelled: status === 'Cancelled' ? `${plusOneDay(date)} 12:00:00` : EMPTY_DATETIME,
    subtotal: fromCents(subtotal),
    credit: fromCents(credit),
    tax: '0.00',
    total,
    status,
    paymentmethod: gateway,
    notes: extras.notes ?? '',
    createdAt: `${date} 09:00:00`,
    updatedAt: wasPaid ? paidOn : `${date} 09:00:00`,
    items: items.map((item) => ({ id: 0, type: 'Hosting', taxed: 0, ...item })),
    transactions,
  };
}

const item = (relid: number, description: string, amount: string): ItemSeed => ({ relid, description, amount });

function seedInvoices(): Invoice[] {
  const invoices = [
    // ---- client 1 ----
    invoice(1, 1, 'Paid', '2025-06-01', [
      item(1, 'VPS - VPS S - vps1.acme.example (01/06/2025 - 30/06/2025)\nExtra IPv4 Addresses: 2 x IPv4 address\nDaily Backups: Yes', '16.99'),
    ]),
    invoice(2, 1, 'Paid', '2025-07-01', [item(2, 'VPS - VPS M - vps2.acme.example (01/07/2025 - 30/09/2025)', '57.00')], { credit: '25.00' }),
    invoice(3, 1, 'Unpaid', '2026-11-20', [item(3, 'VPS - VPS L - vps3.acme.example (20/11/2026 - 19/12/2026)\nMemory (GB): 4', '55.99')], {
      duedate: '2026-11-27',
    }),
    invoice(4, 1, 'Refunded', '2024-01-10', [item(4, 'VPS - VPS S - old.acme.example (10/01/2024 - 09/02/2024)', '9.99')]),
    invoice(5, 1, 'Cancelled', '2024-02-01', [item(5, 'Web Hosting - Web Hosting Starter &amp; Mail - acme-shop.example (01/02/2024 - 31/01/2025)', '49.00')]),
    invoice(6, 1, 'Cancelled', '2025-09-05', [item(6, 'VPS - VPS S - suspicious.acme.example (05/09/2025 - 04/10/2025)', '9.99')]),
    invoice(7, 1, 'Paid', '2025-04-01', [
      item(7, 'Services - Setup Assistance', '49.00'),
      item(8, 'VPS - Free Trial VPS - trial.acme.example', '0.00'),
    ]),
    invoice(8, 1, 'Paid', '2025-08-15', [item(9, 'VPS - VPS L - db1.acme.example (15/08/2025 - 14/02/2026)\nMemory (GB): 2', '247.00')], {
      paymentmethod: 'paypal',
    }),
    invoice(9, 1, 'Draft', '2026-11-15', [], { notes: 'Manual adjustment, items to follow' }),
    invoice(10, 1, 'Unpaid', '2026-10-01', [item(2, 'VPS - VPS M - vps2.acme.example (01/10/2026 - 31/12/2026)', '57.00')]),
    // ---- client 2 (EUR) ----
    invoice(11, 2, 'Paid', '2025-05-10', [item(10, 'VPS - VPS S - web.beta.example (10/05/2025 - 09/06/2025)', '8.99')], { credit: '5.00' }),
    invoice(12, 2, 'Paid', '2025-06-12', [item(11, 'VPS - VPS L - db.beta.example (12/06/2025 - 11/07/2025)\nMemory (GB): 2', '47.69')]),
    invoice(13, 2, 'Unpaid', '2026-10-12', [item(11, 'VPS - VPS L - db.beta.example (12/10/2026 - 11/11/2026)\nMemory (GB): 2', '38.69')]),
    invoice(14, 2, 'Unpaid', '2026-11-18', [item(12, 'VPS - VPS M - new.beta.example (18/11/2026 - 17/12/2026)', '17.99')]),
    invoice(15, 2, 'Refunded', '2024-05-01', [item(13, 'VPS - VPS M (01/05/2024 - 31/07/2024)', '51.00')]),
    invoice(16, 2, 'Cancelled', '2024-06-01', [item(14, 'Web Hosting - Web Hosting Starter &amp; Mail - beta-shop.example (01/06/2024 - 31/05/2025)', '45.00')]),
    invoice(17, 2, 'Cancelled', '2025-10-01', [item(15, 'VPS - VPS S (01/10/2025 - 31/10/2025)', '8.99')]),
    invoice(18, 2, 'Paid', '2025-05-10', [item(16, 'Services - Setup Assistance', '45.00')]),
    invoice(19, 2, 'Draft', '2026-11-10', [item(10, 'VPS - VPS S - web.beta.example (10/12/2026 - 09/01/2027)', '8.99')]),
    // ---- client 3 ----
    invoice(20, 3, 'Paid', '2025-03-03', [item(17, 'VPS - VPS S - gamma1.example (03/03/2025 - 02/04/2025)', '9.99')]),
    invoice(21, 3, 'Paid', '2025-04-04', [item(18, 'VPS - VPS M - gamma2.example (04/04/2025 - 03/05/2025)', '19.99')]),
    invoice(22, 3, 'Unpaid', '2026-09-04', [item(18, 'VPS - VPS M - gamma2.example (04/09/2026 - 03/10/2026)', '19.99')]),
    invoice(23, 3, 'Unpaid', '2026-11-21', [item(19, 'VPS - VPS L - gamma3.example (21/11/2026 - 20/12/2026)\nMemory (GB): 2', '52.99')], {
      duedate: '2026-11-28',
    }),
    invoice(24, 3, 'Refunded', '2024-03-03', [item(20, 'VPS - VPS S (03/03/2024 - 02/04/2024)', '9.99')]),
    invoice(25, 3, 'Cancelled', '2024-04-04', [item(21, 'Web Hosting - Web Hosting Starter &amp; Mail - gamma-shop.example (04/04/2024 - 03/04/2025)', '49.00')]),
    invoice(26, 3, 'Cancelled', '2025-11-11', [item(22, 'VPS - VPS S (11/11/2025 - 10/12/2025)', '9.99')]),
    invoice(27, 3, 'Paid', '2025-03-03', [item(23, 'Services - Setup Assistance', '49.00')]),
    invoice(28, 3, 'Draft', '2026-11-01', [item(17, 'VPS - VPS S - gamma1.example (03/12/2026 - 02/01/2027)', '9.99')]),
    // ---- client 4 ----
    invoice(29, 4, 'Cancelled', '2023-01-01', [item(24, 'Web Hosting - Web Hosting Starter &amp; Mail - delta.example (01/01/2023 - 31/12/2023)', '49.00')]),
  ];
  numberRows(invoices.flatMap((row) => row.items));
  numberRows(invoices.flatMap((row) => row.transactions));
  return invoices;
}

/** Item and transaction ids are global sequences, like their tables' auto-increment ids. */
function numberRows(rows: Array<{ id: number }>): void {
  rows.forEach((row, index) => {
    row.id = index + 1;
  });
}

function seedCredits(): CreditEntry[] {
  return [
    { id: 1, clientId: 1, date: '2025-05-01', description: 'Prepayment (bank transfer)', amount: '50.00', relid: 0 },
    { id: 2, clientId: 1, date: '2025-07-01', description: 'Credit Applied to Invoice #2', amount: '-25.00', relid: 2 },
    { id: 3, clientId: 2, date: '2025-05-01', description: 'Goodwill credit', amount: '5.00', relid: 0 },
    { id: 4, clientId: 2, date: '2025-05-10', description: 'Credit Applied to Invoice #11', amount: '-5.00', relid: 11 },
    { id: 5, clientId: 3, date: '2025-03-01', description: 'Prepayment (bank transfer)', amount: '100.00', relid: 0 },
  ];
}

function seedCancelRequests(): CancelRequest[] {
  const request = (id: number, relid: number, date: string, type: CancelRequest['type'], reason: string): CancelRequest => ({
    id,
    relid,
    date,
    type,
    reason,
    createdAt: date,
    updatedAt: date,
  });
  return [
    // Pending: service 9 is still Active.
    request(1, 9, '2026-11-01 10:00:00', 'End of Billing Period', 'Moving to a dedicated server'),
    // Already processed by the cron (services Cancelled); the rows stay, as in WHMCS.
    request(2, 21, '2025-03-15 09:30:00', 'Immediate', 'No longer needed'),
    request(3, 14, '2025-05-20 18:00:00', 'End of Billing Period', 'Too expensive'),
  ];
}

export function createSeedState(): SimulatorState {
  return {
    settings: {
      autoApplyCredit: true,
      version: '8.12.0',
      canonicalVersion: '8.12.0-release.1',
      systemUrl: 'https://billing.example.com',
    },
    currencies: [
      { id: 1, code: 'USD', prefix: '$', suffix: ' USD', format: '1', rate: '1.00000' },
      { id: 2, code: 'EUR', prefix: '€', suffix: ' EUR', format: '3', rate: '0.92000' },
    ],
    paymentMethods: [
      { module: 'banktransfer', displayName: 'Bank Transfer', active: true },
      { module: 'paypal', displayName: 'PayPal', active: true },
      { module: 'mailin', displayName: 'Mail In Payment', active: false },
    ],
    clients: seedClients(),
    productGroups: [
      { id: 1, name: 'VPS', slug: 'vps' },
      { id: 2, name: 'Web Hosting', slug: 'web-hosting' },
      { id: 3, name: 'Services', slug: 'services' },
      { id: 4, name: 'Legacy', slug: 'legacy' },
    ],
    products: seedProducts(),
    customFields: seedCustomFields(),
    configOptions: seedConfigOptions(),
    servers: [
      { id: 1, name: 'Node1', ipaddress: '192.0.2.5', hostname: 'node1.example.net', module: 'virtualizor' },
      { id: 2, name: 'Node2', ipaddress: '192.0.2.6', hostname: 'node2.example.net', module: 'solusvmpro' },
      { id: 3, name: 'Web1', ipaddress: '192.0.2.20', hostname: 'web1.example.net', module: 'cpanel' },
    ],
    services: seedServices(),
    orders: seedOrders(),
    invoices: seedInvoices(),
    credits: seedCredits(),
    cancelRequests: seedCancelRequests(),
    moduleFunctions: {
      // virtualizor_AdminCustomButtonArray; `reinstall` stands in for an install whose module
      // exposes one (upstream it is UNCONFIRMED), so the gateway's reinstall path has something to call.
      virtualizor: { start: 'power_on', stop: 'power_off', poweroff: 'power_off', reboot: 'reboot', reinstall: 'reinstall' },
      // solusvmpro_AdminCustomButtonArray
      solusvmpro: { boot: 'power_on', shutdown: 'power_off', reboot: 'reboot' },
      cpanel: {},
    },
  };
}

/** The pids a sandbox gateway should list (the others are hidden or retired). */
export const SANDBOX_PUBLIC_PRODUCT_IDS: readonly string[] = createSeedState()
  .products.filter((product) => product.listing === 'public')
  .map((product) => String(product.pid));
