import type { Priority, RequestGate } from './gate.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { DroppedItem, FieldNote } from '../decode.js';
import type { UpstreamMetrics } from '../metrics.js';
import { InvalidResponseError, type RequestContext, type UpstreamApi } from './errors.js';
import { exchange, redact, redactDropped, withoutSecrets, type ExchangeDeps, type UpstreamLogger } from './exchange.js';
import type { Transport, TransportResponse } from './transport.js';

export interface UpstreamCallerOptions {
  api: UpstreamApi;
  /** Checked, without a trailing slash. */
  baseUrl: string;
  /** Sent with every request (credentials included). */
  headers: Readonly<Record<string, string>>;
  /** Values scrubbed from every error, log line and dropped-item report. */
  secrets: readonly string[];
  transport: Transport;
  gate: RequestGate;
  metrics?: UpstreamMetrics | undefined;
  logger?: UpstreamLogger | undefined;
  account?: string | undefined;
  clock?: Clock | undefined;
}

/**
 * What both API clients share: every request goes through the gate, is sent and measured
 * by `exchange`, and is decoded inside the attempt with secrets scrubbed from whatever
 * fails; items the decoders drop are counted and logged the same way.
 */
export class UpstreamCaller {
  private readonly deps: ExchangeDeps;
  /** (endpoint, reason, field) already logged: a shape problem is logged once, not once per poll. */
  private readonly logged = new Set<string>();

  constructor(private readonly options: UpstreamCallerOptions) {
    this.deps = {
      transport: options.transport,
      clock: options.clock ?? systemClock,
      metrics: options.metrics,
      logger: options.logger,
      account: options.account,
    };
  }

  send<T>(
    priority: Priority,
    endpoint: string,
    pathAndQuery: string,
    extraHeaders: Readonly<Record<string, string>>,
    decode: (response: TransportResponse, context: RequestContext) => T,
  ): Promise<T> {
    return this.sendUrl(priority, endpoint, `${this.options.baseUrl}${pathAndQuery}`, extraHeaders, decode);
  }

  /** The same for an absolute URL (the next page of a list), which the caller has checked is on the base URL's origin. */
  sendUrl<T>(
    priority: Priority,
    endpoint: string,
    url: string,
    extraHeaders: Readonly<Record<string, string>>,
    decode: (response: TransportResponse, context: RequestContext) => T,
  ): Promise<T> {
    const { api, secrets } = this.options;
    const context: RequestContext = { api, endpoint };
    const headers = { ...extraHeaders, ...this.options.headers };
    return this.options.gate.run(priority, endpoint, async (signal) => {
      const response = await exchange(this.deps, { context, url, headers, signal, secrets });
      try {
        return withoutSecrets(context, secrets, () => decode(response, context));
      } catch (error) {
        // Items read before the whole response was refused still count as dropped.
        if (error instanceof InvalidResponseError && error.dropped.length > 0) this.report(endpoint, error.dropped);
        throw error;
      } finally {
        // Decoders copy what they keep (monitoring/client.test.ts checks every endpoint), so the body is done with.
        response.release?.();
      }
    });
  }

  /**
   * Counts the dropped items by reason and logs each distinct (endpoint, reason, field) the
   * first time it is seen, and each ignored optional field likewise. Returns the items
   * with secrets scrubbed.
   */
  report(endpoint: string, items: readonly DroppedItem[], notes: readonly FieldNote[] = []): DroppedItem[] {
    const { api, account, secrets } = this.options;
    const redacted = redactDropped(items, secrets);
    this.options.metrics?.countDropped({ api, endpoint, account }, redacted);
    for (const item of redacted) {
      if (!this.firstTime(endpoint, item.reason, item.field)) continue;
      this.options.logger?.warn(
        { account, api, endpoint, reason: item.reason, field: item.field, example: { path: item.path, issue: item.issue } },
        'upstream response items dropped: this is logged once per endpoint, reason and field; monapi_decode_dropped_items_total counts every one',
      );
    }
    for (const note of notes) {
      if (!this.firstTime(endpoint, 'ignored', note.field)) continue;
      this.options.logger?.warn(
        { account, api, endpoint, reason: 'ignored', field: note.field, issue: redact(note.issue, secrets) },
        'an optional field of an upstream response could not be read and is ignored (logged once per endpoint and field)',
      );
    }
    return redacted;
  }

  private firstTime(endpoint: string, reason: string, field: string): boolean {
    const key = `${endpoint}\u0000${reason}\u0000${field}`;
    if (this.logged.has(key)) return false;
    this.logged.add(key);
    return true;
  }
}
