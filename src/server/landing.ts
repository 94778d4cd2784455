import type { FailingSource } from '../scheduler/source-health.js';
import type { MissingField } from './status.js';

export interface LandingPageInfo {
  readonly version: string;
  readonly telemetryPath: string;
  readonly ready: boolean;
  readonly notReadyReason: string | undefined;
  /** Store snapshot generation: how many times the exposition was rebuilt. */
  readonly generation: number;
  readonly series: number;
  readonly failing: readonly FailingSource[];
  readonly missingFields?: readonly MissingField[];
}

/** Longest error message shown per failing source; /status has the whole one. */
const MESSAGE_CHARS = 300;

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page at `/`: what this is, where its endpoints are, its state and the sources failing now. */
export function landingPage(info: LandingPageInfo): string {
  const state = info.ready ? 'ready' : `not ready (${info.notReadyReason ?? 'unknown reason'})`;
  const path = escapeHtml(info.telemetryPath);
  const failing =
    info.failing.length === 0
      ? '<p>Every source works.</p>'
      : `<h2>Failing sources</h2>
<p>These sources keep their last data on ${path} and report <code>monapi_source_up 0</code> with the reason; docs/troubleshooting.md says what each reason means.</p>
<ul>
${info.failing.map(failingItem).join('\n')}
</ul>`;
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>monapi-exporter</title></head>
<body>
<h1>monapi-exporter</h1>
<p>Prometheus exporter for the Monitoring REST API and the Release Lookup API. Version ${escapeHtml(info.version)}.</p>
<p>State: ${escapeHtml(state)}; ${info.series} series exposed; exposition rebuilt ${info.generation} times.</p>
<ul>
<li><a href="${path}">${path}</a> (metrics)</li>
<li><a href="/status">/status</a> (JSON)</li>
<li><a href="/-/healthy">/-/healthy</a></li>
<li><a href="/-/ready">/-/ready</a></li>
</ul>
${failing}
${missingFieldsSection(info.missingFields ?? [])}
</body>
</html>
`;
}

function missingFieldsSection(missing: readonly MissingField[]): string {
  if (missing.length === 0) return '';
  const items = missing.map((m) => `<li>account ${escapeHtml(m.account)}, source ${escapeHtml(m.source)}: <strong>${escapeHtml(m.field)}</strong> (${escapeHtml(m.about)})</li>`);
  return `<h2>Fields not found</h2>
<p>No answer of the upstream carries these fields: the metrics made from them are missing, and <code>monapi_decode_field_missing</code> is 1 for each. Run <code>monapi-exporter probe</code> to see where the answers hold what, and name the path with <code>fields:</code> in the configuration (docs/troubleshooting.md).</p>
<ul>
${items.join('\n')}
</ul>`;
}

function failingItem(f: FailingSource): string {
  const scope = f.targets > 1 ? ` (${f.failing} of ${f.targets} targets)` : '';
  const message = f.message === undefined ? '' : `: ${escapeHtml(f.message.length > MESSAGE_CHARS ? `${f.message.slice(0, MESSAGE_CHARS)}…` : f.message)}`;
  const upgrade = f.upgradeUrl === undefined ? '' : ` Upgrade: ${escapeHtml(f.upgradeUrl)}`;
  return `<li>account ${escapeHtml(f.account)}, source ${escapeHtml(f.source)}: <strong>${escapeHtml(f.reason)}</strong>${scope}${message}${upgrade}</li>`;
}
