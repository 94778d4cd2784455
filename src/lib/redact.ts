/**
 * One scrubber for every text the exporter shows: log lines, /status, the landing page,
 * readiness reasons, reload answers, `--config.check`, the probe's and the backfill's output and
 * crash messages. It knows every configured secret (each `Secret` registers itself; for a
 * configuration that failed to load, every secret its text points at) and finds each in the
 * forms an upstream, a serialiser or a mistake can give it back in:
 *
 * - as written, in any letter case (an upstream that upper-cases what it echoes);
 * - escaped: as a JSON string (once or twice: a JSON text inside a log line; `\uXXXX` for what
 *   is not ASCII), YAML (single-quoted), a shell word (single-quoted, double-quoted, with
 *   backslashes), HTML;
 * - URL-encoded, each character or only some, once or twice (`%6B`, `%256B`), in any case,
 *   with `+` for spaces;
 * - base64 and base64url, wherever it sits inside a longer base64 text (`Basic dXNlcjprZXk=`
 *   holds `user:key`), and hex, of the secret as written, lower-cased, upper-cased, with its
 *   case swapped or capitalised;
 * - cut short: a text that ends (or whose quoted part ends) with the first 6 or more
 *   characters of any of these forms, as a clip to a length leaves it.
 *
 * A PEM block (a TLS key) is also known line by line, so a part of one is found too.
 *
 * Scrubbing is the last step before a text leaves, and it comes before the text is escaped,
 * quoted or cut wherever the caller does either (`scrubValue` for a value that is serialised);
 * the escaped and cut forms above are what is left when that order was not kept.
 *
 * Secrets shorter than `MIN_SECRET_LENGTH` are not scrubbed: that short a value would take
 * ordinary words with it, and no real key is that short.
 */

export const REDACTED_TEXT = '[REDACTED]';
export const MIN_SECRET_LENGTH = 6;
/** A cut-off form is scrubbed when at least this many of its first characters are left. */
export const MIN_PARTIAL_LENGTH = 6;
/** Base64 fragments shorter than this would match by chance too often to be worth scrubbing. */
const MIN_BASE64_FORM = 8;
/** Up to this many forms are each looked for with indexOf; more go through an index of their first characters. */
const INDEXOF_LIMIT = 64;
/** Forms are indexed by this many first characters; shorter ones are looked for one by one. */
const PREFIX = 4;
/** Lines of a PEM body shorter than this (the last one) are not secrets of their own. */
const MIN_PEM_LINE = 16;

/** Forms of one kind: looked for one by one while few, through an index of their first characters beyond. */
class FormSet {
  private readonly known = new Set<string>();
  readonly list: string[] = [];
  index: PrefixIndex | undefined;

  add(form: string): void {
    if (this.known.has(form)) return;
    this.known.add(form);
    this.list.push(form);
    if (this.index !== undefined) addToIndex(this.index, form);
    else if (this.list.length > INDEXOF_LIMIT) this.index = indexByPrefix(this.list);
  }
}

export interface RedactorOptions {
  /** What a match becomes. Default `[REDACTED]`. */
  readonly replacement?: string;
  /** Shorter secrets are ignored. Default `MIN_SECRET_LENGTH`. */
  readonly minLength?: number;
}

export class Redactor {
  private readonly secrets = new Set<string>();
  private readonly replacement: string;
  private readonly minLength: number;
  /** Matched against the text folded (`fold`), as it is and with its %XX escapes decoded. */
  private readonly folded = new FormSet();
  /** Matched against the text as it is. */
  private readonly exact = new FormSet();

  constructor(options: RedactorOptions = {}) {
    this.replacement = options.replacement ?? REDACTED_TEXT;
    this.minLength = Math.max(1, options.minLength ?? MIN_SECRET_LENGTH);
  }

  /** Learns secrets; values that are not strings, or too short, are ignored. Each costs its own forms only. */
  add(...values: readonly unknown[]): void {
    for (const value of values) {
      if (typeof value !== 'string') continue;
      for (const secret of secretsOf(value)) {
        if (secret.length < this.minLength || this.secrets.has(secret)) continue;
        this.secrets.add(secret);
        this.learnForms(secret);
      }
    }
  }

  /** How many secrets it knows. */
  get size(): number {
    return this.secrets.size;
  }

  /** Whether `text` holds a known secret in any of its forms. */
  finds(text: string): boolean {
    return this.ranges(text).length > 0;
  }

  /** `text` with every form of every known secret replaced by `[REDACTED]`. */
  scrub(text: string): string {
    if (this.secrets.size === 0) return text;
    const ranges = this.ranges(text);
    if (ranges.length === 0) return text;
    let out = '';
    let at = 0;
    for (const [start, end] of ranges) {
      out += `${text.slice(at, start)}${this.replacement}`;
      at = end;
    }
    return out + text.slice(at);
  }

  /**
   * A copy of a JSON-safe value with every string scrubbed (keys included), as JSON would
   * carry it: each string is scrubbed as it is, before it is escaped for JSON.
   */
  scrubValue<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    const json = JSON.stringify(value);
    if (json === undefined) return value;
    // JSON.parse gives back the same shape with the strings replaced; the caller's type still holds.
    return JSON.parse(json, (_key, item: unknown) => {
      if (typeof item === 'string') return this.scrub(item);
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) out[this.scrub(key)] = inner;
      return out;
    }) as T;
  }

  /** Start and end (exclusive) of every match, merged and in order. */
  private ranges(text: string): [number, number][] {
    if (this.secrets.size === 0) return [];
    const found: [number, number][] = [];
    const folded = fold(text);
    search(folded, this.folded, (start, end) => found.push([start, end]));
    if (text.includes('%')) {
      const view = decodedView(folded);
      search(view.text, this.folded, (start, end) => found.push([view.start(start), view.start(end)]));
    }
    search(text, this.exact, (start, end) => found.push([start, end]));
    if (found.length <= 1) return found;
    found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const merged: [number, number][] = [];
    for (const range of found) {
      const last = merged[merged.length - 1];
      if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
      else merged.push([range[0], range[1]]);
    }
    return merged;
  }

  private learnForms(secret: string): void {
    for (const variant of caseVariants(secret)) {
      for (const form of textForms(variant)) this.folded.add(fold(form));
      this.folded.add(Buffer.from(variant, 'utf8').toString('hex'));
      for (const form of base64Forms(variant)) this.exact.add(form);
    }
  }
}

/** The secrets a value holds: itself, and for a PEM block its body whole and line by line. */
function secretsOf(value: string): string[] {
  const secret = value.trim();
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(secret)) return [secret];
  const lines = secret
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('-----') && !/^[A-Za-z-]+:/.test(line));
  return [secret, lines.join(''), ...lines.filter((line) => line.length >= MIN_PEM_LINE)];
}

/** The secret as written, lower- and upper-cased, with its case swapped, and capitalised. */
function caseVariants(secret: string): Set<string> {
  const swapped = [...secret].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
  const capitalised = secret.charAt(0).toUpperCase() + secret.slice(1).toLowerCase();
  return new Set([secret, secret.toLowerCase(), secret.toUpperCase(), swapped, capitalised]);
}

/** How a text can be escaped or encoded on its way out, as text. */
function textForms(secret: string): string[] {
  const json = (text: string) => JSON.stringify(text).slice(1, -1);
  // Encoders that escape everything beyond ASCII, or the slash, or both.
  const jsonAscii = json(secret).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = [
    secret,
    json(secret),
    json(json(secret)),
    jsonAscii,
    jsonAscii.replace(/\//g, '\\/'),
    json(secret).replace(/\//g, '\\/'),
    secret.replace(/'/g, "''"),
    secret.replace(/'/g, "'\\''"),
    secret.replace(/'/g, `'"'"'`),
    secret.replace(/[\\"$`]/g, '\\$&'),
    secret.replace(/[^A-Za-z0-9_\-.,:/@%+=]/g, '\\$&'),
    secret.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`),
    secret.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c] ?? c),
    secret.replace(/ /g, '+'),
  ];
  try {
    const url = encodeURIComponent(secret);
    forms.push(url, url.replace(/%20/g, '+'), encodeURIComponent(url));
  } catch {
    // A lone surrogate has no URL encoding; nothing can send it that way.
  }
  return forms;
}

const HTML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * The base64 and base64url text that encodes `secret` at each of the three byte offsets it
 * can have inside a longer encoded text, cut to the characters that depend on the secret
 * alone.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const inner = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    if (inner.length < MIN_BASE64_FORM) continue;
    forms.push(inner);
    const url = inner.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== inner) forms.push(url);
  }
  return forms;
}

/**
 * What may follow the part of a secret a cut left: the end of the text, an ellipsis, a closing
 * quote (the end of a JSON or YAML string), an escape, a tag, a space.
 */
function endsACut(code: number): boolean {
  return (
    Number.isNaN(code) ||
    code === 0x22 || // "
    code === 0x27 || // '
    code === 0x60 || // `
    code === 0x5c || // \
    code === 0x2e || // .
    code === 0x2026 || // …
    code === 0x25 || // %
    code === 0x3c || // <
    code === 0x26 || // &
    code === 0x20 ||
    code === 0x09 ||
    code === 0x0a ||
    code === 0x0d
  );
}

/**
 * Reports `form` at `at` whole, or its first characters where the text stops there (cut): up to
 * the last place within what matches that ends a cut, since what follows a cut (a closing
 * quote after a backslash) may by chance be how the form goes on.
 */
function extend(text: string, at: number, form: string, hit: (start: number, end: number) => void): void {
  const most = Math.min(form.length, text.length - at);
  let n = 0;
  while (n < most && text.charCodeAt(at + n) === form.charCodeAt(n)) n++;
  if (n === form.length) {
    hit(at, at + n);
    return;
  }
  while (n >= MIN_PARTIAL_LENGTH && !endsACut(text.charCodeAt(at + n))) n--;
  if (n >= MIN_PARTIAL_LENGTH) hit(at, at + n);
}

function search(text: string, forms: FormSet, hit: (start: number, end: number) => void): void {
  const each = (form: string) => {
    const head = form.length > MIN_PARTIAL_LENGTH ? form.slice(0, MIN_PARTIAL_LENGTH) : form;
    for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + 1)) extend(text, at, form, hit);
  };
  const { index } = forms;
  if (index === undefined) {
    forms.list.forEach(each);
    return;
  }
  index.short.forEach(each);
  for (let i = 0; i + PREFIX <= text.length; i++) {
    // Most positions start no form: a bit per hash of the first characters says so without building a string.
    const h = prefixHash(text, i);
    if ((index.bits[h >>> 3]! & (1 << (h & 7))) === 0) continue;
    const candidates = index.forms.get(text.slice(i, i + PREFIX));
    if (candidates === undefined) continue;
    for (const form of candidates) extend(text, i, form, hit);
  }
}

interface PrefixIndex {
  /** Forms by their first `PREFIX` characters. */
  readonly forms: Map<string, string[]>;
  /** Forms shorter than `PREFIX`, looked for one by one. */
  readonly short: string[];
  /** A bit per `prefixHash` value that some form starts with. */
  readonly bits: Uint8Array;
}

const HASH_BITS = 20;

function prefixHash(text: string, at: number): number {
  let h = 0;
  for (let k = 0; k < PREFIX; k++) h = (Math.imul(h, 31) + text.charCodeAt(at + k)) | 0;
  return (h ^ (h >>> HASH_BITS)) & ((1 << HASH_BITS) - 1);
}

function indexByPrefix(forms: readonly string[]): PrefixIndex {
  const index: PrefixIndex = { forms: new Map(), short: [], bits: new Uint8Array((1 << HASH_BITS) / 8) };
  for (const form of forms) addToIndex(index, form);
  return index;
}

function addToIndex(index: PrefixIndex, form: string): void {
  if (form.length < PREFIX) {
    index.short.push(form);
    return;
  }
  const key = form.slice(0, PREFIX);
  const list = index.forms.get(key);
  if (list) list.push(form);
  else index.forms.set(key, [form]);
  const h = prefixHash(form, 0);
  index.bits[h >>> 3]! |= 1 << (h & 7);
}

/**
 * Lower-cases each UTF-16 unit that lower-cases to one unit and keeps the others, so the
 * folded text has the length of the text and a match maps back as it is. The same function
 * folds the forms, so both sides agree on every character (no context rules such as a final
 * sigma).
 */
function fold(text: string): string {
  // eslint-disable-next-line no-control-regex -- ASCII lower-cases one unit for one unit.
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text[i] as string;
    const lower = unit.toLowerCase();
    out += lower.length === 1 ? lower : unit;
  }
  return out;
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The folded text with its %XX escapes decoded (twice, for `%25XX`), and where each of its
 * characters started in it, so a match maps back to the original's range.
 */
function decodedView(text: string): { text: string; start(index: number): number } {
  let out = '';
  const starts: number[] = [];
  for (let i = 0; i < text.length; ) {
    starts.push(i);
    let char = text[i] as string;
    let width = 1;
    if (char === '%' && HEX.test(text.slice(i + 1, i + 3))) {
      char = String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      width = 3;
      if (char === '%' && HEX.test(text.slice(i + 3, i + 5))) {
        char = String.fromCharCode(parseInt(text.slice(i + 3, i + 5), 16));
        width = 5;
      }
    }
    const lower = char.toLowerCase();
    out += lower.length === 1 ? lower : char;
    i += width;
  }
  starts.push(text.length);
  return { text: out, start: (index) => starts[index] ?? text.length };
}

/**
 * The process's redactor: every `Secret` and every secret a configuration text points at teach
 * it, and the logger, the HTTP pages and the command line scrub through it.
 */
export const processRedactor = new Redactor();
