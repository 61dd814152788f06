/** GetProducts, GetPaymentMethods, GetCurrencies and WhmcsDetails. */
import type { ConfigOption, CyclePricing, Product, SimulatorState } from '../model.js';
import { phpInt, scalarParam, type ApiObject } from '../protocol.js';
import { choiceDisplayName, choiceInternalValue, type ActionHandler } from './shared.js';

function renderPricing(state: SimulatorState, pricing: Record<string, CyclePricing>, withAffixes: boolean): ApiObject {
  const rendered: ApiObject = {};
  for (const currency of state.currencies) {
    const row = pricing[currency.code];
    if (!row) continue;
    rendered[currency.code] = withAffixes ? { prefix: currency.prefix, suffix: currency.suffix, ...row } : { ...row };
  }
  return rendered;
}

function renderConfigOption(state: SimulatorState, option: ConfigOption): ApiObject {
  // Hidden options and hidden choices are returned too, without a flag.
  return {
    id: option.id,
    name: option.name,
    type: option.type,
    minqty: option.minqty,
    maxqty: option.maxqty,
    options: {
      option: option.choices.map((choice) => ({
        id: choice.id,
        name: choiceDisplayName(choice),
        rawName: choice.rawName,
        recurring: 0,
        required: choiceInternalValue(choice),
        pricing: renderPricing(state, choice.pricing, false),
      })),
    },
  };
}

function renderProduct(state: SimulatorState, product: Product, translated: boolean): ApiObject {
  const group = state.productGroups.find((row) => row.id === product.gid);
  const customFields = state.customFields.filter((field) => field.productId === product.pid && field.showOnOrder);
  const configOptions = product.configOptionIds.flatMap((id) => state.configOptions.filter((option) => option.id === id));
  return {
    pid: product.pid,
    gid: product.gid,
    type: product.type,
    name: product.name,
    translated_name: translated ? product.name : undefined,
    slug: product.slug,
    product_url: `${state.settings.systemUrl}/store/${group?.slug ?? ''}/${product.slug}`,
    description: product.description,
    translated_description: translated ? product.description : undefined,
    module: product.module,
    paytype: product.paytype,
    allowqty: 0,
    quantity_available: 0,
    pricing: renderPricing(state, product.pricing, true),
    customfields: {
      customfield: customFields.map((field) => ({
        id: field.id,
        name: field.name,
        description: field.description,
        // getCustomFields (customfieldfunctions.php) writes a stored "on" as "*".
        required: field.required ? '*' : '',
      })),
    },
    configoptions: { configoption: configOptions.map((option) => renderConfigOption(state, option)) },
  };
}

/** `pid` may be one id or a comma-separated list. */
function requestedPids(pidParam: string | undefined): Set<number> | undefined {
  if (!pidParam) return undefined;
  return new Set(pidParam.split(',').map((part) => phpInt(part)));
}

export const getProducts: ActionHandler = ({ params, state }) => {
  const pids = requestedPids(scalarParam(params, 'pid'));
  const gid = phpInt(params.gid);
  const module = scalarParam(params, 'module');
  const products = state.products.filter(
    (product) => (!pids || pids.has(product.pid)) && (!gid || product.gid === gid) && (!module || product.module === module),
  );
  const translated = Boolean(scalarParam(params, 'language'));
  return {
    result: 'success',
    totalresults: products.length,
    // Absent, not empty, when nothing matches.
    products: products.length === 0 ? undefined : { product: products.map((product) => renderProduct(state, product, translated)) },
  };
};

export const getPaymentMethods: ActionHandler = ({ state }) => {
  const active = state.paymentMethods.filter((method) => method.active);
  return {
    result: 'success',
    totalresults: active.length,
    paymentmethods: { paymentmethod: active.map((method) => ({ module: method.module, displayname: method.displayName })) },
  };
};

export const getCurrencies: ActionHandler = ({ state }) => ({
  result: 'success',
  totalresults: state.currencies.length,
  currencies: {
    currency: state.currencies.map((currency) => ({
      id: String(currency.id),
      code: currency.code,
      prefix: currency.prefix,
      suffix: currency.suffix,
      format: currency.format,
      rate: currency.rate,
    })),
  },
});

export const whmcsDetails: ActionHandler = ({ state }) => ({
  result: 'success',
  whmcs: { version: state.settings.version, canonicalversion: state.settings.canonicalVersion },
});
