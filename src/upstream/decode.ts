import { InvalidResponseError, type RequestContext } from './http/errors.js';
import { decodeAccount } from './monitoring/resources/account.js';
import { decodeAlertRules } from './monitoring/resources/alert-rules.js';
import { decodeRecentAlerts } from './monitoring/resources/alert-events.js';
import { decodeChecks } from './monitoring/resources/checks.js';
import { decodeComponents } from './monitoring/resources/components.js';
import { decodeHost, decodeHosts } from './monitoring/resources/hosts.js';
import { decodeLatest } from './monitoring/resources/latest.js';
import { decodeMetricNames } from './monitoring/resources/metric-names.js';
import { decodeSeries } from './monitoring/resources/series.js';
import { decodeWebsites, decodeWebsiteSummary } from './monitoring/resources/websites.js';
import type { Decoded, JsonDecoder } from './tolerant/body.js';

/**
 * Response decoding: parse the JSON, then read it tolerantly (src/upstream/tolerant/):
 * lists wherever they plausibly sit, unknown fields ignored, optional fields nullable, one
 * malformed item dropped and reported instead of failing the whole response. The shapes
 * accepted per endpoint are in docs/upstream-shapes.md.
 */

export type { Decoded, DroppedItem, JsonDecoder } from './tolerant/body.js';
export type { FieldNote } from './tolerant/fields.js';
export { DROP_REASONS, type DropReason } from './tolerant/values.js';

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
export function decodeBody<T>(decoder: JsonDecoder<T>, body: Buffer, context: RequestContext, contentType?: string): Decoded<T> {
  return decoder(parseJsonBody(body, context, contentType), context);
}

/** One decoder per Monitoring API response. */
export const monitoringDecoders = {
  account: decodeAccount,
  hosts: decodeHosts,
  host: decodeHost,
  metricCatalogue: decodeMetricNames,
  series: decodeSeries,
  latest: decodeLatest,
  components: decodeComponents,
  alertRules: decodeAlertRules,
  recentAlerts: decodeRecentAlerts,
  websites: decodeWebsites,
  websiteSummary: decodeWebsiteSummary,
  checks: decodeChecks,
} satisfies Record<string, JsonDecoder<unknown>>;
