import type { Endpoint } from '../../http/endpoint.js';
import health from './health.js';
import me from './me.js';
import listProducts from './products/list.js';
import getProduct from './products/get.js';
import createOrder from './orders/create.js';
import getOrder from './orders/get.js';
import listServices from './services/list.js';
import getService from './services/get.js';
import getCredentials from './services/credentials.js';
import runAction from './services/actions.js';
import getBalance from './billing/balance.js';
import listInvoices from './billing/invoices.js';
import getInvoicePdf from './billing/invoice-pdf.js';
import getWebhook from './webhooks/get.js';
import putWebhook from './webhooks/put.js';

/** The fifteen endpoints of the interface spec; the OpenAPI route is added by the app. */
export const endpoints = [
  health,
  me,
  listProducts,
  getProduct,
  createOrder,
  getOrder,
  listServices,
  getService,
  getCredentials,
  runAction,
  getBalance,
  listInvoices,
  getInvoicePdf,
  getWebhook,
  putWebhook,
] as unknown as Endpoint[];
