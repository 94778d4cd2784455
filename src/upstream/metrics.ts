import { Counter, Histogram, type Registry } from 'prom-client';
import type { UpstreamApi } from './http/errors.js';
import { DROP_REASONS, type DropReason } from './tolerant/values.js';

/**
 * Self-metrics of the upstream clients: what the exporter spends of each API's request
 * budget, per route template and outcome. Registered on the registry passed in, never on
 * prom-client's global one.
 */
export interface UpstreamMetrics {
  observeRequest(observation: RequestObservation): void;
  /** Counts the items one response had dropped, by reason; every reason's series exists from the first call. */
  countDropped(labels: UpstreamLabels, dropped: readonly { readonly reason: DropReason }[]): void;
  /** A response the transport cut off: over the size cap, past the request deadline, or a redirect not followed. */
  countCutOff?(labels: UpstreamLabels, reason: CutOffReason): void;
}

export type CutOffReason = 'too_large' | 'deadline' | 'redirect';

export interface UpstreamLabels {
  readonly api: UpstreamApi;
  /** Route template, e.g. `/hosts/{uuid}/metrics/series`. */
  readonly endpoint: string;
  /** Account name from the exporter's config; only exposed when `accountLabel` is on. */
  readonly account?: string;
}

export interface RequestObservation extends UpstreamLabels {
  /** HTTP status, or `timeout`, `network`, `aborted` when no status arrived. */
  readonly code: number | 'timeout' | 'network' | 'aborted';
  readonly durationSeconds: number;
  /** Body bytes received (up to the size cap when the body was too large). */
  readonly bytes: number;
}

export interface UpstreamMetricsOptions {
  /** Adds an `account` label to every family; turn on when the exporter polls several accounts. */
  accountLabel?: boolean;
  /** Histogram buckets in seconds. */
  durationBuckets?: readonly number[];
}

export const DEFAULT_DURATION_BUCKETS: readonly number[] = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];

/** Account name used when a client is given none. */
export const DEFAULT_ACCOUNT = 'default';

export function createUpstreamMetrics(registry: Registry, options: UpstreamMetricsOptions = {}): UpstreamMetrics {
  const withAccount = options.accountLabel ?? false;
  const base = withAccount ? (['api', 'account', 'endpoint'] as const) : (['api', 'endpoint'] as const);
  type Base = (typeof base)[number];

  const requests = new Counter<Base | 'code'>({
    name: 'monapi_upstream_requests_total',
    help: 'Requests sent to an upstream API, by route template and HTTP status (or timeout, network, aborted).',
    labelNames: [...base, 'code'],
    registers: [registry],
  });
  const duration = new Histogram<Base>({
    name: 'monapi_upstream_request_duration_seconds',
    help: 'Time from sending an upstream request to receiving its whole body, or to its failure.',
    labelNames: [...base],
    buckets: [...(options.durationBuckets ?? DEFAULT_DURATION_BUCKETS)],
    registers: [registry],
  });
  const bytes = new Counter<Base>({
    name: 'monapi_upstream_response_bytes_total',
    help: 'Response body bytes received from an upstream API.',
    labelNames: [...base],
    registers: [registry],
  });
  const dropped = new Counter<'account' | 'endpoint' | 'reason'>({
    name: 'monapi_decode_dropped_items_total',
    help: 'Items of upstream responses the decoder dropped (the rest of the response was kept), by route template and reason: not_an_object, missing_field (a required field absent or null), wrong_type, invalid_value.',
    labelNames: withAccount ? ['account', 'endpoint', 'reason'] : ['endpoint', 'reason'],
    registers: [registry],
  });

  const cutOff = new Counter<Base | 'reason'>({
    name: 'monapi_upstream_responses_cut_off_total',
    help: 'Upstream responses the exporter cut off instead of reading: too_large (body over the size cap, never buffered whole), deadline (no complete response within the request deadline, e.g. a dripping body), redirect (not followed, so the key never travels elsewhere).',
    labelNames: [...base, 'reason'],
    registers: [registry],
  });

  const labelsOf = (labels: UpstreamLabels): Record<string, string> =>
    withAccount
      ? { api: labels.api, account: labels.account ?? DEFAULT_ACCOUNT, endpoint: labels.endpoint }
      : { api: labels.api, endpoint: labels.endpoint };

  return {
    observeRequest(observation) {
      const labels = labelsOf(observation);
      requests.inc({ ...labels, code: String(observation.code) });
      duration.observe(labels, Math.max(0, observation.durationSeconds));
      bytes.inc(labels, Math.max(0, observation.bytes));
    },
    countCutOff(labels, reason) {
      cutOff.inc({ ...labelsOf(labels), reason });
    },
    countDropped(labels, items) {
      const base = withAccount ? { account: labels.account ?? DEFAULT_ACCOUNT, endpoint: labels.endpoint } : { endpoint: labels.endpoint };
      const byReason = new Map<DropReason, number>(DROP_REASONS.map((reason) => [reason, 0]));
      for (const item of items) byReason.set(item.reason, (byReason.get(item.reason) ?? 0) + 1);
      // Incrementing by 0 still creates the series, so rate() has a starting point.
      for (const [reason, count] of byReason) dropped.inc({ ...base, reason }, count);
    },
  };
}
