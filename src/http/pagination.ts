/** Pagination of the two lists (contract §6): `page`/`per_page` in, `data`/`meta`/`links` and a Link header out. */
import { z } from 'zod';
import { BackendError } from '../backend/backend.js';
import { DETAIL } from '../upstream/answers.js';

/**
 * A whole number from the query string, in decimal digits only: `z.coerce.number()` would also
 * take `0x2`, `1e1`, ` 1` and `2.0`. The document shows the integer schema (the step before it is a
 * transform, which JSON Schema cannot show).
 */
function decimalInteger(min: number, max: number, fallback: number) {
  const digits = (value: unknown) => (typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value);
  const range = `Expected a whole number from ${min} to ${max}.`;
  return z.preprocess(
    digits,
    z
      .int({ error: 'Expected a whole number in decimal digits.' })
      .min(min, { error: range })
      .max(max, { error: range })
      .default(fallback),
  );
}

/**
 * Not strict: a query parameter the lists do not take is ignored, as on every other route (contract
 * §2 refuses unknown body fields, not query parameters; the document lists only these two).
 */
export const PageQuerySchema = z.object({
  page: decimalInteger(1, 1_000_000, 1).meta({ description: 'Page number, from 1.' }),
  per_page: decimalInteger(1, 100, 25).meta({ description: 'Items per page, 1 to 100.' }),
});
export type PageQuery = z.infer<typeof PageQuerySchema>;

export function pageSchema<T extends z.ZodType>(item: T, id: string) {
  const link = z.string().nullable();
  return z
    .object({
      data: z.array(item),
      meta: z.object({
        page: z.number().int(),
        per_page: z.number().int(),
        total: z.number().int(),
        last_page: z.number().int(),
      }),
      links: z.object({ first: z.string(), prev: link, next: link, last: z.string() }),
    })
    .meta({ id });
}

export function paginate<T>(path: string, query: PageQuery, items: T[], total: number) {
  const lastPage = Math.max(1, Math.ceil(total / query.per_page));
  const href = (page: number) => `${path}?page=${page}&per_page=${query.per_page}`;
  const links = {
    first: href(1),
    prev: query.page > 1 ? href(Math.min(query.page - 1, lastPage)) : null,
    next: query.page < lastPage ? href(query.page + 1) : null,
    last: href(lastPage),
  };
  const linkHeader = Object.entries(links)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([rel, url]) => `<${url}>; rel="${rel}"`)
    .join(', ');
  return {
    body: { data: items, meta: { page: query.page, per_page: query.per_page, total, last_page: lastPage }, links },
    headers: { link: linkHeader },
  };
}

/**
 * A page a v1 upstream answered (already checked against the page schema), with this gateway's own
 * links and Link header: its paths, never the upstream's. A page longer than asked for, or another
 * window of the list than the one asked for (an upstream that capped `per_page` or clamped a page
 * past its end), is not one this gateway could answer: its links would skip or repeat records
 * without a word. Unreadable (502).
 */
export function repaginate(path: string, query: PageQuery, upstream: unknown) {
  const page = upstream as { data: unknown[]; meta: { page: number; per_page: number; total: number } };
  const window = page.meta.page === query.page && page.meta.per_page === query.per_page;
  if (page.data.length > query.per_page || !window) {
    throw new BackendError('upstream_error', DETAIL.unreadable, {
      operatorMessage: `v1 upstream ${path}: answered ${page.data.length} items as page ${page.meta.page} of ${page.meta.per_page} for page ${query.page} of ${query.per_page}`,
    });
  }
  return { status: 200, ...paginate(path, query, page.data, page.meta.total) };
}
