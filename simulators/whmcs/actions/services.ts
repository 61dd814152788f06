/** GetClientsProducts: every client's services unless `clientid` is sent, all rows unless `limitnum` is. */
import { EMPTY_DATETIME, type Service, type SimulatorState } from '../model.js';
import { phpInt, scalarParam, type ApiObject, type FormArray } from '../protocol.js';
import { choiceDisplayName, findProduct, groupName, pageParams, paginate, paymentMethodName, type ActionHandler, type SimulatorQuirks } from './shared.js';

/** The source default when `limitnum` is omitted (the docs say 25). */
const ALL_ROWS = 999_999;

const OPTION_TYPE_NAMES = { '1': 'dropdown', '2': 'radio', '3': 'yesno', '4': 'quantity' } as const;

function renderConfigOptions(state: SimulatorState, service: Service): ApiObject[] {
  const product = findProduct(state, service.pid);
  return state.configOptions
    .filter((option) => product?.configOptionIds.includes(option.id))
    .map((option) => {
      const selected = service.configOptionValues[option.id];
      const isChoice = option.type === '1' || option.type === '2';
      const choice = option.choices.find((row) => row.id === selected);
      // Dropdown and radio report the chosen name; yes/no and quantity report the quantity.
      const value = isChoice ? (choice ? choiceDisplayName(choice) : '') : String(selected ?? 0);
      return { id: String(option.id), option: option.name, type: OPTION_TYPE_NAMES[option.type], value };
    });
}

function renderCustomFields(state: SimulatorState, service: Service): ApiObject[] {
  return state.customFields
    .filter((field) => field.productId === service.pid)
    .map((field) => ({
      id: String(field.id),
      name: field.name,
      translated_name: field.name,
      value: service.customFieldValues[field.id] ?? '',
    }));
}

function renderService(state: SimulatorState, service: Service, quirks: SimulatorQuirks): ApiObject {
  const product = findProduct(state, service.pid);
  const server = state.servers.find((row) => row.id === service.serverId);
  const order = state.orders.find((row) => row.id === service.orderId);
  // Legacy query code: nearly everything is a string.
  return {
    id: String(service.id),
    qty: '1',
    clientid: String(service.clientId),
    orderid: String(service.orderId),
    ordernumber: order ? String(order.ordernum) : '',
    pid: String(service.pid),
    regdate: service.regdate,
    name: product?.name ?? '',
    translated_name: product?.name ?? '',
    groupname: groupName(state, product),
    translated_groupname: groupName(state, product),
    domain: service.domain,
    dedicatedip: service.dedicatedip,
    assignedips: service.assignedips,
    // The node's address, not the VPS's.
    serverid: String(service.serverId),
    servername: server?.name ?? '',
    serverip: server?.ipaddress ?? '',
    serverhostname: server?.hostname ?? '',
    suspensionreason: service.suspensionreason,
    firstpaymentamount: service.firstpaymentamount,
    recurringamount: service.recurringamount,
    paymentmethod: service.paymentmethod,
    paymentmethodname: paymentMethodName(state, service.paymentmethod),
    billingcycle: service.billingcycle,
    nextduedate: service.nextduedate,
    status: service.status,
    username: service.username,
    password: service.password,
    subscriptionid: '',
    promoid: '0',
    ns1: '',
    ns2: '',
    notes: service.notes,
    diskusage: '0',
    disklimit: '0',
    bwusage: '0',
    bwlimit: '0',
    lastupdate: EMPTY_DATETIME,
    ...(quirks.hideServiceCustomFields ? {} : { customfields: { customfield: renderCustomFields(state, service) } }),
    configoptions: { configoption: renderConfigOptions(state, service) },
  };
}

/** The filters are ANDed; each applies only when PHP finds it truthy (so `clientid=0` filters nothing). */
function matchesFilters(service: Service, params: FormArray): boolean {
  const clientId = phpInt(params.clientid);
  const serviceId = phpInt(params.serviceid);
  const pid = phpInt(params.pid);
  const domain = scalarParam(params, 'domain');
  const username = scalarParam(params, 'username2');
  return (
    (!clientId || service.clientId === clientId) &&
    (!serviceId || service.id === serviceId) &&
    (!pid || service.pid === pid) &&
    (!domain || service.domain === domain) &&
    (!username || service.username === username)
  );
}

export const getClientsProducts: ActionHandler = ({ params, state, quirks }) => {
  const matching = state.services.filter((service) => matchesFilters(service, params)).sort((a, b) => a.id - b.id);
  const page = pageParams(params, ALL_ROWS);
  const rows = paginate(matching, page);
  const echo = (name: string): string | null => scalarParam(params, name) ?? null;
  return {
    result: 'success',
    clientid: echo('clientid'),
    serviceid: echo('serviceid'),
    pid: echo('pid'),
    domain: echo('domain'),
    totalresults: String(matching.length),
    startnumber: page.start,
    numreturned: rows.length,
    // The empty string when nothing matches at all; absent for a page past the last row.
    products: rows.length > 0 ? { product: rows.map((service) => renderService(state, service, quirks)) } : matching.length === 0 ? '' : undefined,
  };
};
