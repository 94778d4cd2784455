import { OPENMETRICS_CONTENT_TYPE } from './render-openmetrics.js';
import { TEXT_CONTENT_TYPE } from './render-text.js';

export type ExpositionFormat = 'text' | 'openmetrics';

export interface Negotiated {
  readonly format: ExpositionFormat;
  readonly contentType: string;
  readonly gzip: boolean;
}

interface MediaRange {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

const OPENMETRICS_VERSIONS = new Set(['1.0.0', '0.0.1']);

function parseQ(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const q = Number(raw);
  // A malformed q-value is treated as 0 so a garbled entry cannot win.
  return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** Splits a header list like `Accept` into entries with lower-cased type and parameters. */
function parseList(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const entry of header.split(',')) {
    const [typePart, ...paramParts] = entry.split(';');
    const type = (typePart ?? '').trim().toLowerCase();
    if (type === '') continue;
    const params = new Map<string, string>();
    for (const part of paramParts) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      params.set(part.slice(0, eq).trim().toLowerCase(), unquote(part.slice(eq + 1).trim()));
    }
    out.push({ type, params, q: parseQ(params.get('q')) });
  }
  return out;
}

/**
 * Picks the exposition format for an `Accept` header: OpenMetrics when an acceptable
 * `application/openmetrics-text` (version 1.0.0, 0.0.1 or none) has the highest q-value
 * (winning ties), otherwise Prometheus text 0.0.4, which is also the answer for a
 * missing header, `*\/*` and unknown types.
 */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || accept.trim() === '') return 'text';
  let openMetricsQ = 0;
  let otherQ = 0;
  for (const range of parseList(accept)) {
    if (range.type === 'application/openmetrics-text') {
      const version = range.params.get('version');
      if (version === undefined || OPENMETRICS_VERSIONS.has(version)) openMetricsQ = Math.max(openMetricsQ, range.q);
    } else if (range.type === 'text/plain' || range.type === 'text/*' || range.type === '*/*') {
      otherQ = Math.max(otherQ, range.q);
    }
  }
  return openMetricsQ > 0 && openMetricsQ >= otherQ ? 'openmetrics' : 'text';
}

/**
 * True when `Accept-Encoding` allows gzip: `gzip` or `x-gzip` with q > 0, or `*` with
 * q > 0 when gzip is not listed explicitly. `gzip;q=0` refuses it.
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (acceptEncoding === undefined) return false;
  let explicit: number | undefined;
  let wildcard: number | undefined;
  for (const coding of parseList(acceptEncoding)) {
    if (coding.type === 'gzip' || coding.type === 'x-gzip') explicit = Math.max(explicit ?? 0, coding.q);
    else if (coding.type === '*') wildcard = Math.max(wildcard ?? 0, coding.q);
  }
  if (explicit !== undefined) return explicit > 0;
  return (wildcard ?? 0) > 0;
}

export function contentTypeOf(format: ExpositionFormat): string {
  return format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE;
}

export function negotiate(accept: string | undefined, acceptEncoding: string | undefined): Negotiated {
  const format = negotiateFormat(accept);
  return { format, contentType: contentTypeOf(format), gzip: acceptsGzip(acceptEncoding) };
}

/** The `Vary` header every negotiated response carries, so caches key on both. */
export const VARY = 'Accept, Accept-Encoding';
