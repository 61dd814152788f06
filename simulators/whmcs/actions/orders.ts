/** GetOrders: `id` and `userid` ANDed, newest first, `orders` absent when empty. */
import { formatPrice, type Order, type ProductType, type SimulatorState } from '../model.js';
import { phpInt, scalarParam, type ApiObject, type FormArray } from '../protocol.js';
import { clientCurrency, findClient, findProduct, groupName, pageParams, paginate, paymentMethodName, type ActionHandler } from './shared.js';

const PRODUCT_TYPE_LABELS: Record<ProductType, string> = {
  hostingaccount: 'Hosting Account',
  reselleraccount: 'Reseller Account',
  server: 'Dedicated/VPS Server',
  other: 'Other Product/Service',
};

function renderLineItems(state: SimulatorState, order: Order): ApiObject[] {
  const currency = clientCurrency(state, findClient(state, order.clientId));
  return state.services
    .filter((service) => service.orderId === order.id)
    .map((service) => {
      const product = findProduct(state, service.pid);
      return {
        type: 'product',
        relid: service.id,
        producttype: product ? PRODUCT_TYPE_LABELS[product.type] : '',
        product: `${groupName(state, product)} - ${product?.name ?? ''}`,
        domain: service.domain,
        billingcycle: service.billingcycle,
        // A formatted price string here (per the 8.12 source), unlike the order's plain `amount`.
        amount: formatPrice(currency, service.firstpaymentamount),
        status: service.status,
      };
    });
}

function renderOrder(state: SimulatorState, order: Order): ApiObject {
  const client = findClient(state, order.clientId);
  const currency = clientCurrency(state, client);
  const invoice = state.invoices.find((row) => row.id === order.invoiceId);
  // Eloquent-era code: ids are ints, money stays a string.
  return {
    id: order.id,
    ordernum: order.ordernum,
    userid: order.clientId,
    contactid: 0,
    requestor_id: client?.users.find((user) => user.isOwner)?.id ?? 0,
    admin_requestor_id: 0,
    name: client ? `${client.firstname} ${client.lastname}` : '',
    date: order.date,
    amount: order.amount,
    paymentmethod: order.paymentmethod,
    paymentmethodname: paymentMethodName(state, order.paymentmethod),
    invoiceid: order.invoiceId,
    status: order.status,
    paymentstatus: invoice?.status ?? null,
    promocode: order.promocode,
    promotype: '',
    promovalue: '',
    ipaddress: order.ipaddress,
    fraudmodule: '',
    fraudoutput: '',
    notes: order.notes,
    currencyprefix: currency?.prefix ?? '',
    currencysuffix: currency?.suffix ?? '',
    lineitems: { lineitem: renderLineItems(state, order) },
  };
}

function matchesFilters(state: SimulatorState, order: Order, params: FormArray): boolean {
  const id = phpInt(params.id);
  const userId = phpInt(params.userid);
  const requestorId = phpInt(params.requestor_id);
  const status = scalarParam(params, 'status');
  const requestor = findClient(state, order.clientId)?.users.find((user) => user.isOwner)?.id;
  return (
    (!id || order.id === id) &&
    (!userId || order.clientId === userId) &&
    (!requestorId || requestor === requestorId) &&
    (!status || order.status === status)
  );
}

export const getOrders: ActionHandler = ({ params, state }) => {
  const matching = state.orders.filter((order) => matchesFilters(state, order, params)).sort((a, b) => b.id - a.id);
  const page = pageParams(params, 25);
  const rows = paginate(matching, page);
  return {
    result: 'success',
    // As in the facts' samples: a number when there are rows, the string "0" when there are none.
    totalresults: matching.length === 0 ? '0' : matching.length,
    startnumber: page.start,
    numreturned: rows.length,
    // Absent, not empty, when there are no rows.
    orders: rows.length === 0 ? undefined : { order: rows.map((order) => renderOrder(state, order)) },
  };
};
