import type { Priority, RequestGate } from '../../budget/types.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { DroppedItem } from '../decode.js';
import type { UpstreamMetrics } from '../metrics.js';
import type { RequestContext, UpstreamApi } from './errors.js';
import { exchange, redactDropped, withoutSecrets, type ExchangeDeps, type UpstreamLogger } from './exchange.js';
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
    const { api, baseUrl, secrets } = this.options;
    const context: RequestContext = { api, endpoint };
    const url = `${baseUrl}${pathAndQuery}`;
    const headers = { ...extraHeaders, ...this.options.headers };
    return this.options.gate.run(priority, endpoint, async (signal) => {
      const response = await exchange(this.deps, { context, url, headers, signal, secrets });
      return withoutSecrets(context, secrets, () => decode(response, context));
    });
  }

  /** Scrubs the dropped items, counts them and logs a sample. */
  dropped(endpoint: string, items: readonly DroppedItem[], what: string): DroppedItem[] {
    const { api, account } = this.options;
    const redacted = redactDropped(items, this.options.secrets);
    this.options.metrics?.countDropped({ api, endpoint, account }, redacted.length);
    if (redacted.length > 0) {
      this.options.logger?.warn({ api, endpoint, dropped: redacted.length, first: redacted.slice(0, 3) }, `${what}; they were dropped`);
    }
    return redacted;
  }
}
