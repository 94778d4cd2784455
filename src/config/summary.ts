import { formatDuration } from './duration.js';
import type { SourceConfig, SourceConfigSpec } from './source-spec.js';
import type { Config, SecretSource } from './types.js';

function keySource(source: SecretSource): string {
  return source.kind === 'env' ? `env ${source.name}` : `file ${source.path}`;
}

/** What each source says of itself in one section, in the order of the specs. */
function sourceWords(specs: readonly SourceConfigSpec[], sources: Readonly<Record<string, SourceConfig>>): { inline: string[]; lines: string[] } {
  const inline: string[] = [];
  const lines: string[] = [];
  for (const spec of specs) {
    const source = sources[spec.name];
    if (source === undefined || spec.summary === undefined) continue;
    const said = spec.summary({ enabled: source.enabled, settings: source.settings, cadenceMs: source.cadenceMs });
    if (said.inline !== undefined) inline.push(said.inline);
    if (said.line !== undefined) lines.push(said.line);
  }
  return { inline, lines };
}

/**
 * What `--config.check` prints: enough to confirm the file says what the operator meant,
 * and nothing secret (key sources are named, keys never shown).
 */
export function summarizeConfig(config: Config, source: string, specs: readonly SourceConfigSpec[]): string {
  const lines = [`configuration ${source} is valid`];
  lines.push(`exporter: metric prefix ${config.exporter.metricPrefix}, sample timestamps ${config.exporter.sampleTimestamps ? 'on' : 'off'}, null points: ${config.exporter.nullHandling}`);
  lines.push(`accounts: ${config.accounts.length}`);
  const accountSpecs = specs.filter((spec) => spec.section === 'account');
  for (const account of config.accounts) {
    // The switches an operator can set, in the order of the list, as the YAML writes them.
    const switchedOn = accountSpecs.filter((spec) => spec.toggle !== undefined && account.sources[spec.name]?.enabled).map((spec) => spec.name);
    const words = sourceWords(accountSpecs, account.sources);
    lines.push(
      `  ${account.name}: ${account.baseUrl}, key from ${keySource(account.apiKeySource)} (${account.authScheme}), ` +
        `${account.rateLimit.requestsPerMinute}/min burst ${account.rateLimit.burst} headroom ${Math.round(account.headroom * 100)}%, concurrency ${account.concurrency}`,
    );
    lines.push(`    sources: ${[switchedOn.length > 0 ? switchedOn.join(', ') : 'none', ...words.inline].join('; ')}`);
    for (const line of words.lines) lines.push(`    ${line}`);
  }
  const releases = config.releases;
  if (releases === undefined) {
    lines.push('releases: off');
  } else {
    const words = sourceWords(
      specs.filter((spec) => spec.section === 'releases'),
      releases.sources,
    );
    const where = releases.mode === 'free' ? releases.freeBaseUrl : `${releases.marketplaceBaseUrl}, key from ${keySource(releases.marketplaceKeySource)}`;
    const gap = releases.shortestScheduleGapMs === undefined ? '' : `, runs at least ${formatDuration(releases.shortestScheduleGapMs)} apart`;
    lines.push([`releases: ${releases.mode} mode (${where}), schedule "${releases.schedule}" UTC${gap}`, ...words.inline].join(', '));
    for (const line of words.lines) lines.push(`  ${line}`);
  }
  return lines.join('\n');
}
