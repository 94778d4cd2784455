/**
 * One scrubber for every text the exporter shows: log lines, /status, the landing page,
 * readiness reasons, reload answers and `--config.check`. It knows every configured secret
 * (and, for a configuration that failed to load, every secret its text points at) and finds
 * each in the forms an upstream or a mistake can give it back in:
 *
 * - as written, in any letter case (an upstream that upper-cases what it echoes);
 * - URL-encoded, each character or only some, once or twice (`%6B`, `%256B`), in any case;
 * - base64 and base64url, wherever it sits inside a longer base64 text (`Basic dXNlcjprZXk=`
 *   holds `user:key`), of the secret as written, lower-cased or upper-cased.
 *
 * Secrets shorter than `MIN_SECRET_LENGTH` are not scrubbed: that short a value would take
 * ordinary words with it, and no real key is that short.
 */

export const REDACTED_TEXT = '[REDACTED]';
export const MIN_SECRET_LENGTH = 6;
/** Base64 fragments shorter than this would match by chance too often to be worth scrubbing. */
const MIN_BASE64_FORM = 8;
/** Up to this many forms are each looked for with indexOf; more go through an index of their first characters. */
const INDEXOF_LIMIT = 64;
/** Forms are indexed by this many first characters; shorter ones are looked for one by one. */
const PREFIX = 4;

interface Forms {
  /** Matched against the text lower-cased and URL-decoded. */
  readonly folded: readonly string[];
  /** Matched against the text as it is. */
  readonly exact: readonly string[];
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
  private forms: Forms | undefined;
  private foldedIndex: PrefixIndex | undefined;
  private exactIndex: PrefixIndex | undefined;

  constructor(options: RedactorOptions = {}) {
    this.replacement = options.replacement ?? REDACTED_TEXT;
    this.minLength = Math.max(1, options.minLength ?? MIN_SECRET_LENGTH);
  }

  /** Learns secrets; values that are not strings, or too short, are ignored. */
  add(...values: readonly unknown[]): void {
    for (const value of values) {
      if (typeof value !== 'string') continue;
      const secret = value.trim();
      if (secret.length < this.minLength || this.secrets.has(secret)) continue;
      this.secrets.add(secret);
      this.forms = undefined;
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

  /** Scrubs every string of a JSON-safe value (keys included); returns a copy. */
  scrubValue<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    // JSON.parse gives back the same shape with the strings replaced; the caller's type still holds.
    return JSON.parse(this.scrub(JSON.stringify(value) ?? 'null')) as T;
  }

  /** Start and end (exclusive) of every match, merged and in order. */
  private ranges(text: string): [number, number][] {
    if (this.secrets.size === 0) return [];
    const forms = this.currentForms();
    const found: [number, number][] = [];
    const view = foldedView(text);
    this.search(view.text, forms.folded, true, (start, length) => found.push([view.start(start), view.start(start + length)]));
    this.search(text, forms.exact, false, (start, length) => found.push([start, start + length]));
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

  private search(text: string, forms: readonly string[], folded: boolean, hit: (start: number, length: number) => void): void {
    const one = (form: string) => {
      for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) hit(at, form.length);
    };
    if (forms.length <= INDEXOF_LIMIT) {
      forms.forEach(one);
      return;
    }
    for (const form of forms) if (form.length < PREFIX) one(form);
    const index = folded ? (this.foldedIndex ??= indexByPrefix(forms)) : (this.exactIndex ??= indexByPrefix(forms));
    for (let i = 0; i + PREFIX <= text.length; i++) {
      // Most positions start no form: a bit per hash of the first characters says so without building a string.
      const h = prefixHash(text, i);
      if ((index.bits[h >>> 3]! & (1 << (h & 7))) === 0) continue;
      const candidates = index.forms.get(text.slice(i, i + PREFIX));
      if (candidates === undefined) continue;
      for (const form of candidates) if (text.startsWith(form, i)) hit(i, form.length);
    }
  }

  private currentForms(): Forms {
    if (this.forms) return this.forms;
    const folded = new Set<string>();
    const exact = new Set<string>();
    for (const secret of this.secrets) {
      // eslint-disable-next-line no-control-regex -- ASCII is what the folded view can decode and lower-case faithfully.
      if (/^[\x00-\x7f]*$/.test(secret)) folded.add(secret.toLowerCase());
      else {
        exact.add(secret);
        exact.add(encodeURIComponent(secret));
      }
      for (const variant of new Set([secret, secret.toLowerCase(), secret.toUpperCase()])) {
        for (const form of base64Forms(variant)) exact.add(form);
      }
    }
    const longestFirst = (a: string, b: string) => b.length - a.length;
    this.forms = { folded: [...folded].sort(longestFirst), exact: [...exact].sort(longestFirst) };
    this.foldedIndex = undefined;
    this.exactIndex = undefined;
    return this.forms;
  }
}

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

interface PrefixIndex {
  /** Forms by their first `PREFIX` characters. */
  readonly forms: Map<string, string[]>;
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
  const index = new Map<string, string[]>();
  const bits = new Uint8Array((1 << HASH_BITS) / 8);
  for (const form of forms) {
    if (form.length < PREFIX) continue;
    const key = form.slice(0, PREFIX);
    const list = index.get(key);
    if (list) list.push(form);
    else index.set(key, [form]);
    const h = prefixHash(form, 0);
    bits[h >>> 3]! |= 1 << (h & 7);
  }
  return { forms: index, bits };
}

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The text lower-cased with its %XX escapes decoded (twice, for `%25XX`), and where each of
 * its characters started in the original, so a match maps back to the original's range.
 */
function foldedView(text: string): { text: string; start(index: number): number } {
  if (!text.includes('%')) {
    const lower = text.toLowerCase();
    // Lower-casing keeps the length for ASCII; for the rare text where it does not, take the slow path.
    if (lower.length === text.length) return { text: lower, start: (index) => index };
  }
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
    // One output character per input step keeps the index map simple; a character that
    // lower-cases to two is kept as it is.
    out += lower.length === 1 ? lower : char;
    i += width;
  }
  starts.push(text.length);
  return { text: out, start: (index) => starts[index] ?? text.length };
}

/**
 * The process's redactor: configuration loading teaches it every secret, and the logger,
 * the HTTP pages and the command line scrub through it.
 */
export const processRedactor = new Redactor();
