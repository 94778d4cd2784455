export { loadConfig, parseConfig, type ParseConfigOptions, type ReadFile } from './load.js';
export { ConfigError, formatIssue, type ConfigIssue } from './errors.js';
export { Secret } from './secret.js';
export { summarizeConfig } from './summary.js';
export { parseDuration, formatDuration } from './duration.js';
export { analyseCron, CRON_TIMEZONE, type CronAnalysis } from './cron.js';
export {
  createHostFilter,
  createNameFilter,
  selectMetrics,
  tagLabel,
  TAG_LABEL_PREFIX,
  type HostFilterConfig,
  type IncludeExclude,
  type MetricOverride,
  type SelectedMetric,
  type TagLabel,
} from './patterns.js';
export { CADENCES, INGEST_DELAY } from './schema.js';
export {
  CADENCE_NAMES,
  DEFAULT_RELEASES_SCHEDULE,
  FREE_ENDPOINT_CACHE_MS,
  MARKETPLACE_MIN_GAP_MS,
  METRIC_PREFIX,
  SOURCE_NAMES,
  type AccountConfig,
  type AuthScheme,
  type CadenceName,
  type Config,
  type ExporterConfig,
  type FreeReleasesConfig,
  type MarketplaceReleasesConfig,
  type NullHandling,
  type ReleaseProject,
  type ReleasesConfig,
  type SecretSource,
  type SourceName,
} from './types.js';
export {
  parseFlags,
  helpText,
  FlagError,
  DEFAULT_CONFIG_FILE,
  DEFAULT_LISTEN_ADDRESS,
  LOG_FORMATS,
  LOG_LEVELS,
  type Flags,
  type LogFormat,
  type LogLevel,
  type ParseFlagsOptions,
} from './flags.js';
