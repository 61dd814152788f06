/**
 * The documentation of every problem type (RFC 9457 §3.1.1: a type URI, dereferenced, should
 * document its problem): `GET /problems/{reason}` and the list at `GET /problems/`, on the public
 * listener, without a key, as the v1 health and OpenAPI routes are (the source-IP limit counts
 * them). Small self-contained HTML pages, or JSON for a client that prefers it, made once from
 * the closed table and REASON_DOCS (src/errors.ts): the admin API's reasons too, since its
 * problems carry the same type base.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN_REASONS, ApiError, REASON_DOCS, REASONS, reasonSpec, type AnyReason } from '../errors.js';

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}' +
  'code{background:#f0f0f0;padding:0 .2em}table{border-collapse:collapse}' +
  'th,td{text-align:left;vertical-align:top;padding:.25rem .75rem .25rem 0;border-bottom:1px solid #ddd}';

/** Nothing loads but the one inline style, allowed by its hash. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The pages change only with a release of the gateway. */
const CACHE_CONTROL = 'public, max-age=86400';

const ALL_REASONS = [...Object.keys(REASONS), ...Object.keys(ADMIN_REASONS)] as AnyReason[];

/** A page as HTML and as JSON, one of which is sent (see prefersJson). */
interface Variants {
  html: string;
  json: string;
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** A description's text as HTML: its `backquoted` parts as code. */
function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function document(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>\n<body>\n${body}\n</body></html>\n`;
}

const ABOUT =
  '<p>Every error of the gateway is <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, ' +
  '<code>status</code>, <code>detail</code>, <code>instance</code>, <code>reason</code> and <code>request_id</code>. ' +
  'Switch on <code>reason</code>; quote <code>request_id</code> when reporting a problem.</p>';

function isAdminOnly(reason: AnyReason): boolean {
  return Object.hasOwn(ADMIN_REASONS, reason);
}

function description(reason: AnyReason, typeBase: string) {
  const { status, title } = reasonSpec(reason);
  const { when, whatToDo } = REASON_DOCS[reason];
  return { type: `${typeBase}${reason}`, reason, status, title, api: isAdminOnly(reason) ? 'admin' : 'v1', when, what_to_do: whatToDo };
}

function reasonPage(reason: AnyReason, typeBase: string): Variants {
  const about = description(reason, typeBase);
  const html = document(`${about.status} ${reason}: ${about.title}`, [
    '<p><a href="./">All problem types</a></p>',
    `<h1>${escapeHtml(about.title)}</h1>`,
    '<table>',
    `<tr><th>reason</th><td><code>${reason}</code></td></tr>`,
    `<tr><th>HTTP status</th><td>${about.status}</td></tr>`,
    `<tr><th>type</th><td><code>${escapeHtml(about.type)}</code></td></tr>`,
    '</table>',
    ...(about.api === 'admin' ? ['<p>Answered only by the admin API (on the operations listener).</p>'] : []),
    `<h2>When</h2>\n<p>${prose(about.when)}</p>`,
    `<h2>What to do</h2>\n<p>${prose(about.what_to_do)}</p>`,
    ABOUT,
  ].join('\n'));
  return { html, json: JSON.stringify(about) };
}

function indexPage(typeBase: string): Variants {
  const row = (reason: AnyReason) => {
    const { status, title } = reasonSpec(reason);
    return `<tr><td>${status}</td><td><a href="${reason}">${reason}</a></td><td>${escapeHtml(title)}</td></tr>`;
  };
  const table = (reasons: AnyReason[]) => `<table>\n<tr><th>Status</th><th>reason</th><th>title</th></tr>\n${reasons.map(row).join('\n')}\n</table>`;
  const html = document('Problem types', [
    '<h1>Problem types</h1>',
    ABOUT,
    '<h2>The v1 API</h2>',
    table(ALL_REASONS.filter((reason) => !isAdminOnly(reason))),
    '<h2>The admin API only</h2>',
    table(ALL_REASONS.filter(isAdminOnly)),
  ].join('\n'));
  return { html, json: JSON.stringify({ problem_types: ALL_REASONS.map((reason) => description(reason, typeBase)) }) };
}

/** A media range's quality for `type`: that of the most specific range matching it (RFC 9110 §12.5.1). */
function quality(accept: string, type: string): number {
  const family = `${type.slice(0, type.indexOf('/'))}/*`;
  let specificity = -1;
  let q = 0;
  for (const range of accept.split(',')) {
    const [name, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const matched = name === type ? 2 : name === family ? 1 : name === '*/*' ? 0 : -1;
    if (matched <= specificity) continue;
    specificity = matched;
    const value = Number(params.find((param) => param.startsWith('q='))?.slice(2) ?? 1);
    q = Number.isFinite(value) ? value : 0;
  }
  return q;
}

/** JSON only when the client ranks it above HTML; a tie, or no Accept, is the page. */
function prefersJson(accept: string | undefined): boolean {
  return accept !== undefined && quality(accept, 'application/json') > quality(accept, 'text/html');
}

function send(request: FastifyRequest, reply: FastifyReply, variants: Variants): FastifyReply {
  const json = prefersJson(request.headers.accept);
  return reply
    .header('content-type', json ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8')
    .header('cache-control', CACHE_CONTROL)
    .header('vary', 'accept')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .send(json ? variants.json : variants.html);
}

/** The pages, for the types `typeBase` makes (config problemTypeBase). */
export function registerProblemPages(app: FastifyInstance, typeBase: string): void {
  const pages = new Map(ALL_REASONS.map((reason) => [reason as string, reasonPage(reason, typeBase)]));
  const index = indexPage(typeBase);
  // Public as the v1 health route is: the request gate counts the source IP, nothing asks for a key.
  const config = { scope: 'public' as const };
  app.get('/problems/', { config }, async (request, reply) => send(request, reply, index));
  app.get<{ Params: { reason: string } }>('/problems/:reason', { config }, async (request, reply) => {
    const page = pages.get(request.params.reason);
    if (!page) throw new ApiError('not_found', 'No such problem type.');
    return send(request, reply, page);
  });
}
