import { z } from 'zod';
import { InvalidResponseError, type RequestContext } from './http/errors.js';
import {
  Account,
  AlertEvent,
  AlertRule,
  AlertRuleList,
  Component,
  ComponentList,
  Host,
  HostList,
  LatestValue,
  MetricCatalogue,
  RecentAlerts,
  SeriesPoint,
  SeriesResponse,
  Website,
  WebsiteCheck,
  WebsiteCheckList,
  WebsiteList,
  WebsiteSummary,
} from './monitoring/schemas.js';
import {
  MarketplaceAssets,
  MarketplaceSource,
  MarketplaceVersion,
  ReleaseRecord,
  VersionOnly,
} from './releases/schemas.js';

/**
 * Response decoding. Unknown fields are accepted and stripped. In lists, one malformed item
 * is dropped and reported instead of failing the whole response; a malformed envelope (the
 * list itself missing, a required top-level field wrong) is an InvalidResponseError.
 */

export interface DroppedItem {
  /** Where the item sat, e.g. `hosts[3]` or `series["system.cpu.user"][7]`. */
  readonly path: string;
  /** The first validation issue, e.g. `uuid: expected string, received undefined`. */
  readonly issue: string;
}

export interface Decoded<T> {
  readonly value: T;
  readonly dropped: readonly DroppedItem[];
}

/** A decoder turns parsed JSON into a typed value, or throws InvalidResponseError. */
export type JsonDecoder<T> = (raw: unknown, context: RequestContext) => Decoded<T>;

const MAX_REPORTED_ISSUES = 20;

/** Parses a body as JSON; a body that is not JSON fails with a message naming what arrived. */
export function parseJsonBody(body: Buffer, context: RequestContext, contentType?: string): unknown {
  const text = body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const what = contentType ? ` (content-type ${contentType.split(';')[0]?.trim()})` : '';
    // V8 quotes the start of the body in its message; the body is upstream text that may
    // echo anything, credentials included, so the excerpt is left out.
    const reason = error instanceof Error ? error.message.replace(/"[\s\S]*"(\.\.\.)?/, '(excerpt omitted)') : 'unparsable';
    const message =
      text.trim().length === 0 ? `empty body where JSON was expected${what}` : `body is not valid JSON${what}: ${reason}`;
    throw new InvalidResponseError(context, message, [`body: ${reason}`]);
  }
}

/** Parses and decodes in one step. */
export function decodeBody<T>(
  decoder: JsonDecoder<T>,
  body: Buffer,
  context: RequestContext,
  contentType?: string,
): Decoded<T> {
  return decoder(parseJsonBody(body, context, contentType), context);
}

/** Formats a JSON path the way a reader would type it: `hosts[3].uuid`, `series["a.b"][0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out || '(root)';
}

export function formatIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): string[] {
  return error.issues.map((issue) => `${formatPath([...prefix, ...issue.path])}: ${issue.message}`);
}

/** Strictly decodes a whole value; any issue fails the response. */
export function decodeWhole<S extends z.ZodType>(schema: S, raw: unknown, context: RequestContext, what: string): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issues = formatIssues(result.error).slice(0, MAX_REPORTED_ISSUES);
  throw new InvalidResponseError(context, `${what} does not have the expected shape: ${issues.slice(0, 3).join('; ')}`, issues);
}

/** Decodes each item on its own; the bad ones are dropped and reported. */
export function decodeItems<S extends z.ZodType>(
  schema: S,
  items: readonly unknown[],
  path: readonly PropertyKey[],
): { items: z.output<S>[]; dropped: DroppedItem[] } {
  const good: z.output<S>[] = [];
  const dropped: DroppedItem[] = [];
  items.forEach((item, index) => {
    const result = schema.safeParse(item);
    if (result.success) good.push(result.data);
    else dropped.push({ path: formatPath([...path, index]), issue: formatIssues(result.error)[0] ?? 'invalid' });
  });
  return { items: good, dropped };
}

const UnknownArray = z.array(z.unknown());

/** A decoder for `{ <key>: [Item], ...rest }` that keeps the good items. */
function listDecoder<Whole extends z.ZodObject, Item extends z.ZodType, K extends string & keyof z.output<Whole>>(
  whole: Whole,
  key: K,
  item: Item,
  what: string,
): JsonDecoder<z.output<Whole>> {
  const envelope = whole.extend({ [key]: UnknownArray });
  return (raw, context) => {
    const outer = decodeWhole(envelope, raw, context, what) as Record<string, unknown>;
    const { items, dropped } = decodeItems(item, outer[key] as unknown[], [key]);
    return { value: { ...outer, [key]: items } as z.output<Whole>, dropped };
  };
}

function wholeDecoder<S extends z.ZodType>(schema: S, what: string): JsonDecoder<z.output<S>> {
  return (raw, context) => ({ value: decodeWhole(schema, raw, context, what), dropped: [] });
}

const SeriesEnvelope = SeriesResponse.extend({ series: z.record(z.string(), UnknownArray) });

const decodeSeries: JsonDecoder<SeriesResponse> = (raw, context) => {
  const outer = decodeWhole(SeriesEnvelope, raw, context, 'series response');
  const series: Record<string, SeriesPoint[]> = {};
  const dropped: DroppedItem[] = [];
  for (const [name, points] of Object.entries(outer.series)) {
    const decoded = decodeItems(SeriesPoint, points, ['series', name]);
    series[name] = decoded.items;
    dropped.push(...decoded.dropped);
  }
  return { value: { ...outer, series }, dropped };
};

const SummaryEnvelope = WebsiteSummary.extend({ recent_checks: UnknownArray.optional() });

const decodeWebsiteSummary: JsonDecoder<WebsiteSummary> = (raw, context) => {
  const outer = decodeWhole(SummaryEnvelope, raw, context, 'website summary');
  if (outer.recent_checks === undefined) return { value: { ...outer, recent_checks: undefined }, dropped: [] };
  const { items, dropped } = decodeItems(WebsiteCheck, outer.recent_checks, ['recent_checks']);
  return { value: { ...outer, recent_checks: items }, dropped };
};

/** One decoder per Monitoring API response. */
export const monitoringDecoders = {
  account: wholeDecoder(Account, 'account'),
  hosts: listDecoder(HostList, 'hosts', Host, 'host list'),
  host: wholeDecoder(Host, 'host'),
  metricCatalogue: wholeDecoder(MetricCatalogue, 'metric catalogue'),
  series: decodeSeries,
  latest: wholeDecoder(LatestValue, 'latest value'),
  components: listDecoder(ComponentList, 'components', Component, 'component list'),
  alertRules: listDecoder(AlertRuleList, 'rules', AlertRule, 'alert rule list'),
  recentAlerts: listDecoder(RecentAlerts, 'alerts', AlertEvent, 'recent alerts'),
  websites: listDecoder(WebsiteList, 'websites', Website, 'website list'),
  websiteSummary: decodeWebsiteSummary,
  checks: listDecoder(WebsiteCheckList, 'checks', WebsiteCheck, 'website check list'),
} satisfies Record<string, JsonDecoder<unknown>>;

// ---------------------------------------------------------------------------------------
// Release Lookup API

/** The free endpoint's `?version` form: a bare JSON string or `{version}`. */
export const decodeVersionOnly: JsonDecoder<string> = (raw, context) => {
  const value = decodeWhole(VersionOnly, raw, context, 'version');
  return { value: typeof value === 'string' ? value : value.version, dropped: [] };
};

/** A release record (free endpoint's JSON, marketplace `/release`). */
export const decodeReleaseRecord: JsonDecoder<ReleaseRecord> = wholeDecoder(ReleaseRecord, 'release record');

/** Marketplace `/version`. */
export const decodeMarketplaceVersion: JsonDecoder<string> = (raw, context) => ({
  value: decodeWhole(MarketplaceVersion, raw, context, 'version').version,
  dropped: [],
});

/** Marketplace `/source`: `{source}` or `{source_url}`. */
export const decodeMarketplaceSource: JsonDecoder<string> = (raw, context) => {
  const value = decodeWhole(MarketplaceSource, raw, context, 'source');
  return { value: 'source' in value ? value.source : value.source_url, dropped: [] };
};

/** Marketplace `/assets`. */
export const decodeMarketplaceAssets: JsonDecoder<string[]> = (raw, context) => ({
  value: decodeWhole(MarketplaceAssets, raw, context, 'assets').assets,
  dropped: [],
});

/**
 * Marketplace `/text/version` and `/text/source`: exactly one non-blank line. Anything else
 * (an HTML page from a proxy, several lines) is not a version and fails.
 */
export function decodeTextValue(body: Buffer, context: RequestContext, what: string): string {
  const lines = textLines(body);
  const [only] = lines;
  if (lines.length !== 1 || only === undefined || /\s/.test(only) || only.length > 512) {
    const found = lines.length === 0 ? 'an empty body' : `${lines.length} line(s) starting ${JSON.stringify(lines[0]?.slice(0, 40))}`;
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
    else dropped.push({ path: `assets[${index}]`, issue: 'not an http(s) URL' });
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

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
