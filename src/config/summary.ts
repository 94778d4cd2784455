import { formatDuration } from './duration.js';
import { selectMetrics } from './patterns.js';
import { METRIC_CATALOGUE } from '../upstream/monitoring/metric-catalogue.js';
import { SOURCE_NAMES, type Config, type SecretSource } from './types.js';

function keySource(source: SecretSource): string {
  return source.kind === 'env' ? `env ${source.name}` : `file ${source.path}`;
}

/**
 * What `--config.check` prints: enough to confirm the file says what the operator meant,
 * and nothing secret (key sources are named, keys never shown).
 */
export function summarizeConfig(config: Config, source: string): string {
  const lines = [`configuration ${source} is valid`];
  lines.push(`exporter: metric prefix ${config.exporter.metricPrefix}, sample timestamps ${config.exporter.sampleTimestamps ? 'on' : 'off'}, null points: ${config.exporter.nullHandling}`);
  lines.push(`accounts: ${config.accounts.length}`);
  for (const account of config.accounts) {
    const sources = SOURCE_NAMES.filter((name) => account.sources[name]);
    const selected = selectMetrics(account).length;
    lines.push(
      `  ${account.name}: ${account.baseUrl}, key from ${keySource(account.apiKeySource)} (${account.authScheme}), ` +
        `${account.rateLimit.requestsPerMinute}/min burst ${account.rateLimit.burst} headroom ${Math.round(account.headroom * 100)}%, concurrency ${account.concurrency}`,
    );
    lines.push(
      `    sources: ${sources.length > 0 ? sources.map(snakeCase).join(', ') : 'none'}; metrics: ${selected} selected (catalogue has ${METRIC_CATALOGUE.length}); ` +
        `series every ${formatDuration(account.cadenceMs.series)}, ingest delay ${formatDuration(account.ingestDelayMs)}`,
    );
  }
  const releases = config.releases;
  if (releases === undefined) {
    lines.push('releases: off');
  } else {
    const where = releases.mode === 'free' ? releases.freeBaseUrl : `${releases.marketplaceBaseUrl}, key from ${keySource(releases.marketplaceKeySource)}`;
    const gap = releases.shortestScheduleGapMs === undefined ? '' : `, runs at least ${formatDuration(releases.shortestScheduleGapMs)} apart`;
    lines.push(`releases: ${releases.mode} mode (${where}), schedule "${releases.schedule}" UTC${gap}, ${releases.projects.length} project${releases.projects.length === 1 ? '' : 's'}`);
    const outdated = releases.outdated;
    lines.push(
      outdated === undefined
        ? '  outdated check: off'
        : `  outdated check: ${Object.entries(outdated.software)
            .map(([software, rule]) => `${software} ${rule.project}${rule.line === outdated.line ? '' : ` (${rule.line})`}`)
            .join(', ')}; line ${outdated.line}`,
    );
  }
  return lines.join('\n');
}

/** Names as the YAML writes them (`alert_rules`), not as the program does (`alertRules`). */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
