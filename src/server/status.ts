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
}

export interface FailingSource {
  /** The account label, `(releases)` for the release lookups. */
  readonly account: string;
  readonly source: string;
  /** A bounded reason such as decode_error or plan_required (see docs/troubleshooting.md). */
  readonly reason: string;
  /** Targets failing, of how many. */
  readonly failing: number;
  readonly targets: number;
  /** The latest error message, secrets scrubbed. */
  readonly message: string | undefined;
  /** Where to upgrade the plan, after a 403 plan_required. */
  readonly upgradeUrl?: string | undefined;
}
