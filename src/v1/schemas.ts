/**
 * The v1 resource shapes (contract §6). Every backend returns these, every route parses its output
 * through them (so nothing undocumented leaks), and the OpenAPI document is generated from them.
 */
import { z } from 'zod';

export const IdSchema = z.string().regex(/^[1-9][0-9]{0,17}$/, 'must be a positive integer id').meta({
  description: 'Record identifier (a string of digits).',
  example: '42',
});

export const DateSchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/).meta({ format: 'date', example: '2026-01-31' });
export const TimestampSchema = z.string().meta({ format: 'date-time', example: '2026-01-31T12:00:00Z' });

export const CurrencySchema = z.string().regex(/^[A-Z]{3}$/).meta({ description: 'ISO 4217 code', example: 'USD' });
export const DecimalSchema = z.string().regex(/^-?\d+\.\d{2,}$/).meta({ description: 'Decimal string, never a float', example: '9.99' });

export const MoneySchema = z
  .object({ amount: DecimalSchema, currency: CurrencySchema })
  .meta({ id: 'Money', description: 'An amount of money: a decimal string and its currency.' });
export type Money = z.infer<typeof MoneySchema>;

export const BILLING_CYCLES = ['monthly', 'quarterly', 'semiannually', 'annually', 'biennially', 'triennially', 'onetime', 'free'] as const;
export const BillingCycleSchema = z.enum(BILLING_CYCLES).meta({ id: 'BillingCycle' });
export type BillingCycle = z.infer<typeof BillingCycleSchema>;
/**
 * A service's cycle: one of the orderable ones, or `other` for a period the contract has no name
 * for (FOSSBilling's weekly or 4- and 5-yearly periods), which one such service must not turn into
 * a 502 for the whole list.
 */
export const ServiceBillingCycleSchema = z.enum([...BILLING_CYCLES, 'other']).meta({
  id: 'ServiceBillingCycle',
  description: 'The billing cycles an order may name, or `other` for a period the billing system has that none of them is (weekly, for one).',
});
export type ServiceBillingCycle = z.infer<typeof ServiceBillingCycleSchema>;

// ---- account / key --------------------------------------------------------------------------

export const AccountSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    company: z.string().nullable(),
    email: z.string(),
    status: z.enum(['active', 'inactive', 'closed']),
    currency: CurrencySchema,
  })
  .meta({ id: 'Account' });
export type Account = z.infer<typeof AccountSchema>;

// ---- products -------------------------------------------------------------------------------

export const PriceSchema = z
  .object({ currency: CurrencySchema, billing_cycle: BillingCycleSchema, price: DecimalSchema, setup_fee: DecimalSchema })
  .meta({ id: 'Price', description: 'The price of one billing cycle in one currency. Disabled cycles are absent.' });
export type Price = z.infer<typeof PriceSchema>;

export const ConfigOptionChoiceSchema = z
  .object({ id: z.string(), name: z.string(), prices: z.array(PriceSchema) })
  .meta({ id: 'ConfigOptionChoice' });

export const CONFIG_OPTION_TYPES = ['dropdown', 'radio', 'yesno', 'quantity'] as const;
export const ConfigOptionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(CONFIG_OPTION_TYPES),
    min_quantity: z.number().int().nullable(),
    max_quantity: z.number().int().nullable(),
    choices: z.array(ConfigOptionChoiceSchema),
  })
  .meta({
    id: 'ConfigOption',
    description:
      'A configurable option. In an order, dropdown and radio take a choice id, quantity an integer within min/max, yesno a boolean. A quantity option whose `min_quantity` is null has bounds the backend does not state: it cannot be ordered with a quantity (leave it out for its default).',
  });
export type ConfigOption = z.infer<typeof ConfigOptionSchema>;

export const ProductSchema = z
  .object({
    id: IdSchema,
    name: z.string(),
    description: z.string(),
    type: z.enum(['hosting', 'reseller', 'server', 'other']),
    pay_type: z.enum(['free', 'onetime', 'recurring']),
    prices: z.array(PriceSchema),
    config_options: z.array(ConfigOptionSchema),
  })
  .meta({ id: 'Product' });
export type Product = z.infer<typeof ProductSchema>;

// ---- orders ---------------------------------------------------------------------------------

export const ORDER_STATUSES = ['pending', 'active', 'cancelled', 'fraud', 'other'] as const;
export const PAYMENT_STATUSES = ['paid', 'unpaid', 'cancelled', 'refunded', 'other'] as const;

export const OrderSchema = z
  .object({
    id: IdSchema,
    status: z.enum(ORDER_STATUSES).meta({ description: '`other` stands for a status the backend invented.' }),
    created_at: TimestampSchema,
    total: MoneySchema,
    invoice_id: IdSchema.nullable(),
    payment_status: z.enum(PAYMENT_STATUSES).nullable(),
    service_ids: z.array(IdSchema),
  })
  .meta({ id: 'Order' });
export type Order = z.infer<typeof OrderSchema>;

export const ConfigOptionValueSchema = z.union([z.string().max(64), z.number().int().min(0).max(1_000_000), z.boolean()]);

/** The most `config_options` an order may carry; the refinement enforces it, `maxProperties` documents it. */
const MAX_CONFIG_OPTIONS = 50;

export const OrderInputSchema = z
  .strictObject({
    product_id: IdSchema,
    billing_cycle: BillingCycleSchema,
    config_options: z
      .record(z.string().regex(/^[0-9]{1,18}$/), ConfigOptionValueSchema)
      .refine((value) => Object.keys(value).length <= MAX_CONFIG_OPTIONS, `at most ${MAX_CONFIG_OPTIONS} options`)
      .meta({ maxProperties: MAX_CONFIG_OPTIONS })
      .optional()
      .meta({ description: 'Option id → choice id (dropdown, radio), integer (quantity) or boolean (yesno).' }),
    hostname: z
      .string()
      .max(253)
      .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, 'must be a host name')
      .optional()
      .meta({
        description:
          'The host name the service is for. Some products need one (a hosting account is made for a domain, such as `example.com`): an order for such a product without it is refused with 422 pointing at `/hostname`.',
      }),
  })
  .meta({ id: 'OrderInput' });
export type OrderInput = z.infer<typeof OrderInputSchema>;

// ---- services -------------------------------------------------------------------------------

export const SERVICE_STATUSES = ['pending', 'active', 'suspended', 'terminated', 'cancelled', 'fraud'] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

export const ServiceSchema = z
  .object({
    id: IdSchema,
    product_id: IdSchema,
    product_name: z.string(),
    order_id: IdSchema.nullable(),
    status: z.enum(SERVICE_STATUSES),
    hostname: z.string().nullable(),
    ip_addresses: z.array(z.string()),
    billing_cycle: ServiceBillingCycleSchema,
    recurring_amount: MoneySchema,
    registered_on: DateSchema.nullable(),
    next_due_on: DateSchema.nullable(),
    cancellation_requested: z.boolean().meta({
      description: 'True while a cancellation is pending: requested, not yet in effect. False once the service is cancelled, on every backend.',
    }),
    cancellation_effective_on: DateSchema.nullable().meta({ description: 'When the pending cancellation takes effect; null when none is pending or no date can be promised.' }),
    config_options: z.array(z.object({ name: z.string(), value: z.string() })),
  })
  .meta({ id: 'Service' });
export type Service = z.infer<typeof ServiceSchema>;

export const CredentialsSchema = z
  .object({
    service_id: IdSchema,
    username: z.string().nullable(),
    password: z.string().nullable(),
    hostname: z.string().nullable(),
    ip_addresses: z.array(z.string()),
  })
  .meta({ id: 'ServiceCredentials' });
export type Credentials = z.infer<typeof CredentialsSchema>;

export const PROFILE_ACTIONS = {
  A: ['start', 'stop', 'reboot', 'cancel', 'cancel_revoke'],
  B: ['start', 'stop', 'reboot', 'reinstall', 'suspend', 'unsuspend', 'terminate'],
} as const;
export const ALL_ACTIONS = [...new Set([...PROFILE_ACTIONS.A, ...PROFILE_ACTIONS.B])] as ServiceAction[];
export type ServiceAction = (typeof PROFILE_ACTIONS)[keyof typeof PROFILE_ACTIONS][number];

export const ActionResultSchema = z
  .object({
    action: z.string(),
    outcome: z.enum(['completed', 'scheduled']).meta({
      description: '`scheduled` (HTTP 202): accepted now, takes effect at `effective_on` (cancel).',
    }),
    effective_on: DateSchema.nullable(),
    service: ServiceSchema,
  })
  .meta({ id: 'ActionResult' });
export type ActionResult = z.infer<typeof ActionResultSchema>;

// ---- billing --------------------------------------------------------------------------------

export const BalanceSchema = z.object({ credit: MoneySchema }).meta({ id: 'Balance' });
export type Balance = z.infer<typeof BalanceSchema>;

export const INVOICE_STATUSES = ['draft', 'unpaid', 'paid', 'cancelled', 'refunded', 'collections', 'payment_pending', 'other'] as const;

export const InvoiceSchema = z
  .object({
    id: IdSchema,
    number: z.string(),
    status: z.enum(INVOICE_STATUSES),
    issued_on: DateSchema.nullable(),
    due_on: DateSchema.nullable(),
    paid_at: TimestampSchema.nullable(),
    subtotal: MoneySchema,
    tax: MoneySchema,
    credit: MoneySchema,
    total: MoneySchema,
  })
  .meta({ id: 'Invoice' });
export type Invoice = z.infer<typeof InvoiceSchema>;

/** What the PDF renderer needs; not a v1 response of its own. */
export interface InvoiceDocument extends Invoice {
  /** Payments received so far: with it the page shows how Total becomes the balance due. */
  amount_paid: Money;
  balance: Money;
  /** The payment's date on the billing system's own clock (paid_at is UTC, a day off near midnight). */
  paid_on: string | null;
  /** `tax` by level as the billing system splits it (WHMCS has two); a null rate is one it does not state. */
  taxes: Array<{ rate: string | null; amount: Money }>;
  items: Array<{ description: string; amount: Money; taxed: boolean }>;
  /** `address`: the billing address's lines as the billing system holds them (none: empty); `tax_id`: a VAT or tax number. */
  customer: { name: string; company: string | null; email: string; address: string[]; tax_id: string | null };
}

// ---- lists ----------------------------------------------------------------------------------

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface PageResult<T> {
  items: T[];
  total: number;
}
