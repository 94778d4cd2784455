export interface LandingPageInfo {
  readonly version: string;
  readonly telemetryPath: string;
  readonly ready: boolean;
  readonly notReadyReason: string | undefined;
  /** Store snapshot generation: how many times the exposition was rebuilt. */
  readonly generation: number;
  readonly series: number;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page at `/`: what this is, where its endpoints are, and a one-line state. */
export function landingPage(info: LandingPageInfo): string {
  const state = info.ready ? 'ready' : `not ready (${info.notReadyReason ?? 'unknown reason'})`;
  const path = escapeHtml(info.telemetryPath);
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
</body>
</html>
`;
}
