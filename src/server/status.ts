import type { FailingSource } from '../scheduler/source-health.js';

/**
 * What the HTTP server asks the rest of the exporter about its state. `status()` is served
 * as JSON at /status as is: the provider guarantees it is JSON-safe and holds no secrets.
 */
export interface StatusProvider {
  /** True once the exporter has data worth scraping; /-/ready answers 503 until then. */
  ready(): boolean;
  status(): unknown;
  /** Short reason shown by /-/ready and the landing page while not ready. */
  notReadyReason?(): string;
  /** Sources failing now, for the landing page (never about readiness: a failing source does not stop scrapes). */
  failingSources?(): readonly FailingSource[];
  /** Declared fields no answer carries, for the landing page. */
  missingFields?(): readonly MissingField[];
}

export interface MissingField {
  readonly account: string;
  readonly source: string;
  readonly field: string;
  readonly about: string;
}
