import type { FailingSource } from '../scheduler/source-health.js';
import { badge, clippedText, count, escapeHtml, externalLink, htmlPage } from './html.js';
import { seriesSentence, stateSummary, type Health } from './status-page.js';
import type { MissingField } from './status.js';

export interface LandingPageInfo {
  readonly version: string;
  readonly telemetryPath: string;
  readonly ready: boolean;
  readonly notReadyReason: string | undefined;
  /** Store snapshot generation: how many times the exposition was rebuilt. */
  readonly generation: number;
  /** Series from the upstream APIs (the store's). */
  readonly series: number;
  /** Series the self-metrics add; undefined when they could not be counted. */
  readonly selfSeries: number | undefined;
  /** Sources, accounts and what they do, from the status; `failing` is counted from `failing` below. */
  readonly health: Omit<Health, 'failing'>;
  readonly failing: readonly FailingSource[];
  readonly missingFields?: readonly MissingField[];
}

/** Longest error message shown per failing source; /status has the whole one. */
const MESSAGE_CHARS = 300;

/** The page at `/`: what this is, one statement of its state, how many series it serves, where to look next. */
export function landingPage(info: LandingPageInfo): string {
  const state = stateSummary({ ...info.health, failing: info.failing.length }, info.ready, info.notReadyReason);
  const path = escapeHtml(info.telemetryPath);
  const failing =
    info.failing.length === 0
      ? ''
      : `<h2>Failing sources</h2>
<p>These sources keep their last data on ${path} and report <code>monapi_source_up 0</code>, and their reason as <code>monapi_source_up_reason 1</code>; docs/troubleshooting.md says what each reason means, and the <a href="/status">status page</a> shows their last errors.</p>
<ul class="plain">
${info.failing.map(failingItem).join('\n')}
</ul>`;
  const header = `<h1>monapi-exporter ${escapeHtml(info.version)}</h1>
<p>Prometheus exporter for the Monitoring REST API and the Release Lookup API.</p>`;
  const body = `<p>${badge(state.tone, state.word)} ${escapeHtml(state.sentence)}</p>
<p>${seriesSentence(info.series, info.selfSeries, info.telemetryPath)}. Exposition rebuilt ${count(info.generation)} times.</p>
<ul class="plain">
<li><a href="/status">Status page</a>: every account's plan, request budget and sources, with the age of their data and their last errors</li>
<li><a href="${path}">${path}</a>: the metrics (Prometheus text or OpenMetrics)</li>
<li><a href="/status?format=json">/status?format=json</a>: the status as JSON</li>
<li><a href="/-/healthy">/-/healthy</a> and <a href="/-/ready">/-/ready</a>: the probes</li>
</ul>
${failing}
${missingFieldsSection(info.missingFields ?? [])}`;
  return htmlPage('monapi-exporter', header, body);
}

function missingFieldsSection(missing: readonly MissingField[]): string {
  if (missing.length === 0) return '';
  const items = missing.map((m) => `<li>account ${escapeHtml(m.account)}, source ${escapeHtml(m.source)}: <strong>${escapeHtml(m.field)}</strong> (${escapeHtml(m.about)})</li>`);
  return `<h2>Fields not found</h2>
<p>No answer of the upstream carries these fields: the metrics made from them are missing, and <code>monapi_decode_field_missing</code> is 1 for each. Run <code>monapi-exporter probe</code> to see where the answers hold what, and name the path with <code>fields:</code> in the configuration; the <a href="/status">status page</a> shows the lines to paste.</p>
<ul class="plain">
${items.join('\n')}
</ul>`;
}

function failingItem(f: FailingSource): string {
  const scope = f.targets > 1 ? ` (${f.failing} of ${f.targets} targets)` : '';
  const message = f.message === undefined ? '' : `: ${clippedText(f.message, MESSAGE_CHARS)}`;
  const upgrade = f.upgradeUrl === undefined ? '' : ` ${externalLink(f.upgradeUrl, 'Upgrade: ')}`;
  return `<li>account ${escapeHtml(f.account)}, source ${escapeHtml(f.source)}: <strong>${escapeHtml(f.reason)}</strong>${scope}${message}${upgrade}</li>`;
}
