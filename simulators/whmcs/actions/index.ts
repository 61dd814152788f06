/** The API catalogue: every action the simulator answers, by normalized name. */
import { addCancelRequest, gatewayDeleteCancelRequest, getCancelledPackages } from './cancellation.js';
import { getCurrencies, getPaymentMethods, getProducts, whmcsDetails } from './catalog.js';
import { getClientsDetails, getCredits } from './clients.js';
import { getInvoice, getInvoices } from './billing.js';
import { moduleCustom, moduleSuspend, moduleTerminate, moduleUnsuspend } from './modules.js';
import { acceptOrder, addOrder } from './ordering.js';
import { getOrders } from './orders.js';
import { getClientsProducts } from './services.js';
import type { ActionHandler } from './shared.js';

export interface ActionDefinition {
  handler: ActionHandler;
  /** List actions answer XML without `responsetype`; the others answer NVP text. */
  list: boolean;
}

const ACTIONS: Record<string, ActionDefinition> = {
  getclientsdetails: { handler: getClientsDetails, list: false },
  getcredits: { handler: getCredits, list: true },
  getproducts: { handler: getProducts, list: true },
  getpaymentmethods: { handler: getPaymentMethods, list: true },
  getcurrencies: { handler: getCurrencies, list: true },
  whmcsdetails: { handler: whmcsDetails, list: false },
  addorder: { handler: addOrder, list: false },
  acceptorder: { handler: acceptOrder, list: false },
  getorders: { handler: getOrders, list: true },
  getclientsproducts: { handler: getClientsProducts, list: true },
  modulecustom: { handler: moduleCustom, list: false },
  modulesuspend: { handler: moduleSuspend, list: false },
  moduleunsuspend: { handler: moduleUnsuspend, list: false },
  moduleterminate: { handler: moduleTerminate, list: false },
  addcancelrequest: { handler: addCancelRequest, list: false },
  getcancelledpackages: { handler: getCancelledPackages, list: true },
  gatewaydeletecancelrequest: { handler: gatewayDeleteCancelRequest, list: false },
  getinvoices: { handler: getInvoices, list: true },
  getinvoice: { handler: getInvoice, list: true },
};

export function findAction(name: string): ActionDefinition | undefined {
  return Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
}
