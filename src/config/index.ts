export { createConfigLoader, type ConfigLoader, type ParseConfigOptions, type ReadFile } from './load.js';
export { ConfigError, formatIssue, type ConfigIssue } from './errors.js';
export { Secret } from './secret.js';
export { summarizeConfig } from './summary.js';
export { parseDuration, formatDuration } from './duration.js';
export { analyseCron, cronSchedule, CRON_TIMEZONE, type CronAnalysis, type CronSchedule } from './cron.js';
export { createNameFilter, type IncludeExclude } from './patterns.js';
export type { CadenceSpec, ConfigSection, SourceConfig, SourceConfigSpec } from './source-spec.js';
export {
  DEFAULT_RELEASES_SCHEDULE,
  FREE_ENDPOINT_CACHE_MS,
  MARKETPLACE_MIN_GAP_MS,
  METRIC_PREFIX,
  type AccountConfig,
  type AuthScheme,
  type Config,
  type ExporterConfig,
  type FreeReleasesConfig,
  type MarketplaceReleasesConfig,
  type NullHandling,
  type ReleasesConfig,
  type SecretSource,
} from './types.js';
