import type { Secret } from './secret.js';
import type { SourceConfig } from './source-spec.js';

/** The program's view of the configuration: fully defaulted, camelCase, durations in milliseconds. */
export interface Config {
  readonly exporter: ExporterConfig;
  readonly accounts: readonly AccountConfig[];
  /** Absent when the config has no `releases` section. */
  readonly releases: ReleasesConfig | undefined;
  /** The optional `remote_write` section; absent in hand-built configs. */
  readonly remoteWrite?: RemoteWriteConfig | undefined;
}

/** Where and how the exporter pushes what it polls (and the backfill its history), as Prometheus' `remote_write`. */
export interface RemoteWriteConfig {
  readonly url: string;
  readonly pushIntervalMs: number;
  readonly remoteTimeoutMs: number;
  /** Extra request headers, such as Mimir's X-Scope-OrgID; never credentials. */
  readonly headers: Readonly<Record<string, string>>;
  /** Added to every series pushed (a series' own label of the same name wins). */
  readonly externalLabels: Readonly<Record<string, string>>;
  /** The Authorization header's value: `Basic ...` or `<type> <credentials>`. */
  readonly authorization: Secret | undefined;
  /** The TLS files, read when the configuration was loaded (PEM). */
  readonly tls: { readonly ca?: string; readonly cert?: string; readonly key?: string; readonly serverName?: string; readonly insecureSkipVerify: boolean };
  readonly queue: {
    readonly capacity: number;
    readonly maxSamplesPerSend: number;
    readonly batchSendDeadlineMs: number;
    readonly minBackoffMs: number;
    readonly maxBackoffMs: number;
    readonly retryOnHttp429: boolean;
  };
}

/** Fixed: dashboards, alerts and the docs depend on it. */
export const METRIC_PREFIX = 'monapi_';

/**
 * What to do with a null point (a gap, or a minute the agent has not reported yet) once
 * it is older than `ingest_delay`: `skip` ignores it (a gauge shows its newest non-null
 * value, a counter adds nothing); `nan` exposes a gauge as NaN when its newest point is null.
 */
export type NullHandling = 'skip' | 'nan';

export interface ExporterConfig {
  readonly metricPrefix: typeof METRIC_PREFIX;
  /** Opt-in: timestamps on samples break staleness handling and cause out-of-order drops. */
  readonly sampleTimestamps: boolean;
  readonly nullHandling: NullHandling;
}

export type AuthScheme = 'bearer' | 'x-api-key';

/** Where a secret came from, for summaries and error messages (never the value). */
export type SecretSource = { readonly kind: 'env'; readonly name: string } | { readonly kind: 'file'; readonly path: string };

/** How an account (or the release lookups) talks HTTP to its upstream. */
export interface HttpConfig {
  /** Time to the response headers, and the longest silence between two body chunks. */
  readonly timeoutMs: number;
  /** The whole request, headers and body together. */
  readonly deadlineMs: number;
  /** A larger body is cut off, never buffered whole. */
  readonly maxResponseBytes: number;
  /** Absolute path of the CA file, when one is set. */
  readonly caFile: string | undefined;
  /** Its PEM text, read when the configuration was loaded. */
  readonly ca: string | undefined;
  readonly insecureSkipVerify: boolean;
}

/** Bounds on what one account adds to /metrics; 0 means no bound. */
export interface LimitsConfig {
  /** Series (label sets) of the account; beyond it whole families are dropped. */
  readonly series: number;
  readonly metricNameLength: number;
  readonly labelNameLength: number;
  readonly labelValueLength: number;
}

export interface AccountConfig {
  /** The `account` label: `[a-z0-9_-]+`, unique. */
  readonly name: string;
  /** Without a trailing slash; ends in `/api/v2`. */
  readonly baseUrl: string;
  readonly apiKey: Secret;
  readonly apiKeySource: SecretSource;
  readonly authScheme: AuthScheme;
  readonly rateLimit: { readonly requestsPerMinute: number; readonly burst: number };
  /** Fraction (0-0.9) of the rate limit left unused. */
  readonly headroom: number;
  readonly concurrency: number;
  /** The most pages of one list followed (absent in hand-built configs: 50). */
  readonly maxPagesPerList?: number;
  /** Absent only in hand-built configs, which get the defaults. */
  readonly http?: HttpConfig;
  /** Absent only in hand-built configs, which get the defaults. */
  readonly limits?: LimitsConfig;
  /** Counter state of a host or metric that disappeared is kept this long, so it continues if it comes back. */
  readonly counterGraceMs: number;
  /** Every source of the account by name: switched on or not, its cadences and its own settings. */
  readonly sources: Readonly<Record<string, SourceConfig>>;
}

interface ReleasesCommon {
  /** node-cron expression, 5 or 6 fields. */
  readonly schedule: string;
  /** Run the schedule in this zone: the gap check assumed UTC. */
  readonly scheduleTimezone: 'Etc/UTC';
  /** The shortest time between two runs of the schedule; undefined if it runs at most once in 28 years. */
  readonly shortestScheduleGapMs: number | undefined;
  readonly allowPollingFasterThanCache: boolean;
  /** Absent only in hand-built configs, which get the defaults. */
  readonly http?: HttpConfig;
  /** The release sources by name: what each looks up (its settings) and whether it is on. */
  readonly sources: Readonly<Record<string, SourceConfig>>;
}

export interface FreeReleasesConfig extends ReleasesCommon {
  readonly mode: 'free';
  /** Without a trailing slash; a project is fetched at `<freeBaseUrl>/<owner>/<repo>`. */
  readonly freeBaseUrl: string;
}

export interface MarketplaceReleasesConfig extends ReleasesCommon {
  readonly mode: 'marketplace';
  readonly marketplaceBaseUrl: string;
  readonly marketplaceKey: Secret;
  readonly marketplaceKeySource: SecretSource;
  /** Value of the host header; defaults to the host of `marketplaceBaseUrl`. */
  readonly marketplaceHost: string;
  readonly headerNames: { readonly key: string; readonly host: string };
}

export type ReleasesConfig = FreeReleasesConfig | MarketplaceReleasesConfig;

/** The free endpoint caches each answer this long. */
export const FREE_ENDPOINT_CACHE_MS = 2 * 3_600_000;
/** The marketplace bills per request: runs closer than this are refused. */
export const MARKETPLACE_MIN_GAP_MS = 60_000;
export const DEFAULT_RELEASES_SCHEDULE = '17 */2 * * *';
