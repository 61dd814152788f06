/**
 * The wire rules WHMCS applies around every action: PHP request parsing (`pid[0]=1`), input
 * HTML-encoding, PHP truthiness and integer casts, and the three response encodings (JSON with
 * flags 79, NVP text, XML).
 */

// ---- request ----------------------------------------------------------------------------------

export type FormValue = string | FormArray;
export interface FormArray {
  [key: string]: FormValue;
}

/** Names that would reach Object.prototype if used as keys; PHP has no such thing, so drop them. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Splits `a[b][]` into `['a', 'b', '']`, as PHP's parse_str does (text after a broken bracket is ignored). */
function splitKey(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0) return [name];
  const path = [name.slice(0, open)];
  const bracket = /\[([^\]]*)\]/y;
  bracket.lastIndex = open;
  for (let match = bracket.exec(name); match; match = bracket.exec(name)) path.push(match[1] ?? '');
  return path;
}

function nextIndex(array: FormArray): string {
  const indexes = Object.keys(array).filter((key) => /^\d+$/.test(key)).map(Number);
  return String(indexes.length === 0 ? 0 : Math.max(...indexes) + 1);
}

function assign(target: FormArray, path: string[], value: string): void {
  let node = target;
  for (const [depth, segment] of path.entries()) {
    const key = segment === '' ? nextIndex(node) : segment;
    if (UNSAFE_KEYS.has(key)) return;
    if (depth === path.length - 1) {
      node[key] = value;
      return;
    }
    const child = node[key];
    const array: FormArray = typeof child === 'object' ? child : {};
    node[key] = array;
    node = array;
  }
}

/** Parses a query string or form body with PHP semantics: brackets build arrays, a repeated plain key keeps the last value. */
export function parsePhpForm(text: string, into: FormArray = {}): FormArray {
  for (const [name, value] of new URLSearchParams(text)) assign(into, splitKey(name), value);
  return into;
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#039;' };

/** `htmlspecialchars($value, ENT_QUOTES)`. */
function htmlEncode(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ENTITIES[char] ?? char);
}

/** WHMCS HTML-encodes every inbound string before any action sees it. */
export function sanitizeInput(params: FormArray): FormArray {
  const clean: FormArray = {};
  for (const [key, value] of Object.entries(params)) {
    clean[key] = typeof value === 'string' ? htmlEncode(value) : sanitizeInput(value);
  }
  return clean;
}

/** The string value of a parameter; `undefined` when absent or an array. */
export function scalarParam(params: FormArray, name: string): string | undefined {
  const value = params[name];
  return typeof value === 'string' ? value : undefined;
}

/** PHP truthiness: absent, "" and "0" are false; everything else, including "false", is true. */
export function isTruthy(value: FormValue | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value === 'string') return value !== '' && value !== '0';
  return Object.keys(value).length > 0;
}

/** PHP `(int)` cast of a request value: the leading integer, else 0. */
export function phpInt(value: FormValue | number | boolean | null | undefined): number {
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value !== 'string') return 0;
  const match = /^\s*[+-]?\d+/.exec(value);
  return match ? Number(match[0]) : 0;
}

const ACTION_ALIASES: Record<string, string> = {
  getclientsdata: 'getclientsdetails',
  getclientsdatabyemail: 'getclientsdetails',
};

/** WHMCS lowercases the action and strips non-alphanumerics; two legacy names are aliases. */
export function normalizeActionName(raw: string): string {
  const name = raw.toLowerCase().replace(/[^a-z0-9]/g, '');
  return ACTION_ALIASES[name] ?? name;
}

// ---- response -----------------------------------------------------------------------------------

/** A response value as PHP would hold it; `undefined` object members are left out (an absent key). */
export type ApiValue = string | number | boolean | null | undefined | ApiValue[] | ApiObject;
export interface ApiObject {
  [key: string]: ApiValue;
}

/** `JSON_HEX_TAG | JSON_HEX_AMP | JSON_HEX_APOS | JSON_HEX_QUOT`; slashes stay unescaped (flag 64). */
const JSON_HEX_ESCAPES: Record<string, string> = {
  '<': '\\u003C',
  '>': '\\u003E',
  '&': '\\u0026',
  "'": '\\u0027',
  '"': '\\u0022',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

function unicodeEscape(codeUnit: number): string {
  return `\\u${codeUnit.toString(16).padStart(4, '0')}`;
}

/** What PHP escapes: the JSON_HEX_* characters, controls, and every non-ASCII UTF-16 unit. */
const ESCAPED = /[<>&'"\\\u0000-\u001f\u0080-\uffff]/g;

/**
 * PHP escapes every non-ASCII UTF-16 unit (no JSON_UNESCAPED_UNICODE in flags 79). One pass of a
 * regular expression, and none for the usual plain text: a page of 25 invoices is about 700 strings.
 */
function encodeJsonString(text: string): string {
  ESCAPED.lastIndex = 0;
  if (!ESCAPED.test(text)) return `"${text}"`;
  return `"${text.replace(ESCAPED, (char) => JSON_HEX_ESCAPES[char] ?? unicodeEscape(char.charCodeAt(0)))}"`;
}

/** `json_encode($value, 79)`, as WHMCS's JsonResponse writes it. */
export function encodePhpJson(value: ApiValue): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return encodeJsonString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(encodePhpJson).join(',')}]`;
  const members = Object.entries(value).filter(([, member]) => member !== undefined);
  return `{${members.map(([key, member]) => `${encodeJsonString(key)}:${encodePhpJson(member)}`).join(',')}}`;
}

/** PHP's string cast of a scalar. */
function phpString(value: string | number | boolean | null): string {
  if (typeof value === 'boolean') return value ? '1' : '';
  return value === null ? '' : String(value);
}

/** The legacy `key=value;` text; only top-level scalars, as nested data has no NVP form. */
export function encodeNvp(body: ApiObject): string {
  return Object.entries(body)
    .filter((entry): entry is [string, string | number | boolean | null] => entry[1] !== undefined && (entry[1] === null || typeof entry[1] !== 'object'))
    .map(([key, value]) => `${key}=${phpString(value)};`)
    .join('');
}

/** The five entities htmlspecialchars writes are valid XML escapes too. */
const escapeXml = htmlEncode;

function xmlElement(name: string, value: ApiValue): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) {
    // An array repeats its own element name (`product[]` → <product/><product/>); empty stays an empty element.
    return value.length === 0 ? `<${name}></${name}>` : value.map((entry) => xmlElement(name, entry)).join('');
  }
  if (value !== null && typeof value === 'object') {
    const children = Object.entries(value).map(([key, child]) => xmlElement(key, child));
    return `<${name}>${children.join('')}</${name}>`;
  }
  return `<${name}>${escapeXml(phpString(value))}</${name}>`;
}

/** The XML document list actions default to without `responsetype=json`. */
export function encodeXml(action: string, body: ApiObject, version: string): string {
  const members = Object.entries(body).map(([key, value]) => xmlElement(key, value));
  return `<?xml version="1.0" encoding="utf-8"?>\n<whmcsapi version="${escapeXml(version)}">\n<action>${escapeXml(action)}</action>\n${members.join('\n')}\n</whmcsapi>\n`;
}
