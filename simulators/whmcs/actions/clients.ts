/** GetClientsDetails and GetCredits. */
import { formatPrice, fromCents, toCents, type Client, type SimulatorState } from '../model.js';
import { isTruthy, phpInt, scalarParam, type ApiObject } from '../protocol.js';
import { clientCurrency, failure, findClient, invoiceBalance, type ActionHandler } from './shared.js';

function renderClient(state: SimulatorState, client: Client): ApiObject {
  const owner = client.users.find((user) => user.isOwner);
  return {
    client_id: client.id,
    owner_user_id: owner?.id ?? 0,
    id: client.id,
    uuid: client.uuid,
    firstname: client.firstname,
    lastname: client.lastname,
    fullname: `${client.firstname} ${client.lastname}`,
    companyname: client.companyname,
    email: client.email,
    address1: '',
    city: '',
    state: '',
    postcode: '',
    countrycode: client.countrycode,
    phonenumber: '',
    currency: client.currencyId,
    currency_code: clientCurrency(state, client)?.code ?? '',
    groupid: client.groupid,
    status: client.status,
    credit: client.credit,
    language: client.language,
    users: { user: client.users.map((user) => ({ id: user.id, name: user.name, email: user.email, is_owner: user.isOwner })) },
  };
}

function renderStats(state: SimulatorState, client: Client): ApiObject {
  const currency = clientCurrency(state, client);
  const unpaid = state.invoices.filter((invoice) => invoice.clientId === client.id && invoice.status === 'Unpaid');
  const unpaidCents = unpaid.reduce((sum, invoice) => sum + toCents(invoiceBalance(invoice)), 0);
  const services = state.services.filter((service) => service.clientId === client.id);
  return {
    numunpaidinvoices: unpaid.length,
    unpaidinvoicesamount: formatPrice(currency, fromCents(unpaidCents)),
    incredit: toCents(client.credit) > 0,
    creditbalance: formatPrice(currency, client.credit),
    productsnumactive: services.filter((service) => service.status === 'Active').length,
    productsnumtotal: services.length,
  };
}

export const getClientsDetails: ActionHandler = ({ params, state }) => {
  const clientId = phpInt(params.clientid);
  const email = scalarParam(params, 'email');
  if (!clientId && !email) return failure('Either clientid Or email Is Required');
  const client = clientId ? findClient(state, clientId) : state.clients.find((row) => row.email === email);
  if (!client) return failure('Client Not Found');
  const details = renderClient(state, client);
  // The client appears twice: the deprecated top-level copy and under `client`.
  return {
    result: 'success',
    ...details,
    client: details,
    stats: isTruthy(params.stats) ? renderStats(state, client) : undefined,
  };
};

export const getCredits: ActionHandler = ({ params, state }) => {
  const client = findClient(state, phpInt(params.clientid));
  if (!client) return failure('Client ID Not Found');
  const credits = state.credits
    .filter((entry) => entry.clientId === client.id)
    .sort((a, b) => a.date.localeCompare(b.date) || a.id - b.id);
  return {
    result: 'success',
    totalresults: credits.length,
    clientid: String(client.id),
    credits: {
      credit: credits.map((entry) => ({
        id: String(entry.id),
        date: entry.date,
        description: entry.description,
        amount: entry.amount,
        relid: String(entry.relid),
      })),
    },
  };
};
