import { processRedactor } from '../../lib/redact.js';
import { InvalidResponseError, type RequestContext } from '../http/errors.js';
import { findList, findObject, readObject, type Decoded, type DroppedItem, type JsonDecoder } from '../tolerant/body.js';
import type { Fields } from '../tolerant/fields.js';
import { boolean, describe, isRecord, nonEmptyString, string } from '../tolerant/values.js';

/**
 * Decoders of the Release Lookup API's answers. Only a release record's `version` is
 * documented as mandatory; the marketplace's JSON layouts of `/version`, `/source` and
 * `/assets` are not shown, so each accepts a bare value as well as an object (at the top
 * level or under `data`/`result`), under the names the service's release record uses.
 */

export interface ReleaseRecord {
  readonly version: string;
  readonly type?: string;
  readonly tag_name?: string;
  /** As sent, e.g. `2020-12-15 14:41:39+00:00`. */
  readonly tag_date?: string;
  readonly v_prefix?: boolean;
  /** The code host's id (`github`), or a URL on some hosts. */
  readonly source?: string;
  readonly source_url?: string;
  readonly assets?: readonly string[];
  readonly from?: string;
}

const VERSION_KEYS = ['version', 'latest_version', 'latest', 'tag_name'];
const SOURCE_KEYS = ['source_url', 'source', 'url', 'tarball_url', 'tarball', 'download_url'];
const ASSET_KEYS = ['assets', 'assets_with_digests', 'urls', 'files', 'downloads'];

/** A release record (free endpoint's JSON, marketplace `/release`); `version` is required. */
export const decodeReleaseRecord: JsonDecoder<ReleaseRecord> = (raw, context) => {
  const { value, notes } = readObject(raw, context, {
    what: 'release record',
    keys: ['release', 'latest'],
    signature: ['version', 'tag_name'],
    read: readRecord,
  });
  return { value, dropped: [], notes };
};

function readRecord(f: Fields): ReleaseRecord {
  const record: { -readonly [K in keyof ReleaseRecord]: ReleaseRecord[K] } = { version: f.required(['version', 'tag_name'], nonEmptyString) };
  const put = <K extends keyof ReleaseRecord>(key: K, value: ReleaseRecord[K] | undefined) => {
    if (value !== undefined) record[key] = value;
  };
  put('type', f.optional('type', string));
  put('tag_name', f.optional('tag_name', string));
  put('tag_date', f.optional(['tag_date', 'date', 'published_at'], string));
  put('v_prefix', f.optional('v_prefix', boolean));
  put('source', f.optional('source', string));
  put('source_url', f.optional(['source_url', 'tarball_url'], string));
  const assets = f.find(['assets', 'assets_with_digests']);
  if (assets !== undefined && Array.isArray(assets.value)) put('assets', urlsOf(assets.value).urls);
  put('from', f.optional('from', string));
  return record;
}

/** The free endpoint's `?version` form and marketplace `/version`: a bare string or an object holding one. */
export const decodeVersionValue: JsonDecoder<string> = (raw, context) => ({ value: scalarOrField(raw, context, 'version', VERSION_KEYS, false), dropped: [] });

/** Marketplace `/source`: a bare URL or an object with `source_url`, `source` (when a URL), `url`, ... */
export const decodeSourceValue: JsonDecoder<string> = (raw, context) => ({ value: scalarOrField(raw, context, 'source URL', SOURCE_KEYS, true), dropped: [] });

/** Marketplace `/assets`: a bare list or an object holding one; each a URL or `{url}`. Items that are not http(s) URLs are dropped. */
export const decodeAssetsValue: JsonDecoder<string[]> = (raw, context) => {
  const found = findList(raw, ASSET_KEYS);
  if (found === undefined) throw new InvalidResponseError(context, `assets: no list of asset URLs found (got ${describe(raw)})`, ['(root): no asset list']);
  const { urls, dropped } = urlsOf(found.items, found.key || 'assets');
  return { value: urls, dropped };
};

function urlsOf(items: readonly unknown[], key = 'assets'): { urls: string[]; dropped: DroppedItem[] } {
  const urls: string[] = [];
  const dropped: DroppedItem[] = [];
  items.forEach((item, index) => {
    const url = isRecord(item) ? (item.url ?? item.browser_download_url ?? item.href) : item;
    if (typeof url === 'string' && isHttpUrl(url)) urls.push(url);
    else dropped.push({ path: `${key}[${index}]`, reason: 'invalid_value', field: 'url', issue: `url: ${describe(url)} is not an http(s) URL` });
  });
  return { urls, dropped };
}

function scalarOrField(raw: unknown, context: RequestContext, what: string, keys: readonly string[], mustBeUrl: boolean): string {
  // A version sent as a JSON number has lost its trailing zeros (6.10 reads as 6.1): only text counts.
  const pick = (value: unknown): string | undefined => {
    const text = typeof value === 'string' ? value.trim() : undefined;
    if (text === undefined || text === '') return undefined;
    return !mustBeUrl || isHttpUrl(text) ? text : undefined;
  };
  const direct = pick(raw);
  if (direct !== undefined) return direct;
  const object = findObject(raw, [], keys);
  if (object !== undefined) {
    for (const key of keys) {
      const value = pick(object[key]);
      if (value !== undefined) return value;
    }
  }
  throw new InvalidResponseError(context, `expected a ${what}, as a bare value or under ${keys.join(', ')} (got ${describe(raw)})`, [`(root): no ${what}`]);
}

/**
 * Marketplace `/text/version` and `/text/source`: exactly one non-blank line. Anything else
 * (an HTML page from a proxy, several lines) is not a version and fails.
 */
export function decodeTextValue(body: Buffer, context: RequestContext, what: string): string {
  const lines = textLines(body);
  const [only] = lines;
  if (lines.length !== 1 || only === undefined || /\s/.test(only) || only.length > 512) {
    const found = lines.length === 0 ? 'an empty body' : `${lines.length} line(s) starting ${JSON.stringify(processRedactor.scrub(lines[0] ?? '').slice(0, 40))}`;
    throw new InvalidResponseError(context, `expected a single ${what} in the text body, found ${found}`, [`body: not a single ${what}`]);
  }
  return only;
}

/** Marketplace `/text/assets`: one URL a line; blank lines ignored, lines that are not URLs dropped. */
export function decodeTextAssets(body: Buffer): Decoded<string[]> {
  const urls: string[] = [];
  const dropped: DroppedItem[] = [];
  textLines(body).forEach((line, index) => {
    if (isHttpUrl(line)) urls.push(line);
    else dropped.push({ path: `assets[${index}]`, reason: 'invalid_value', field: 'url', issue: 'not an http(s) URL' });
  });
  return { value: urls, dropped };
}

function textLines(body: Buffer): string[] {
  return body
    .toString('utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
