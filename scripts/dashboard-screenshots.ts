import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DASHBOARDS_DIR, ROOT } from '../mixin/build.js';
import { PICTURES_MANIFEST, pictureName, type PictureManifest } from '../mixin/pictures.js';
import { intervalSeconds, interpolate, panelQueries, panelTime, queryVariables, resolveVariables, type DashboardJson, type Selection } from '../test/support/grafana.js';
import { startMixinDemo } from '../test/support/mixin-demo.js';
import { PAGE_WIDTH, pageHeight, renderPreview, type TargetResult } from './dashboard-preview/render.js';

/**
 * The pictures of the dashboards in docs/dashboards.md and the README
 * (docs/images/dashboard-*.png), made from real data: the demo at a moment with a host
 * offline and a website outage, scraped by a real Prometheus with the mixin's rules; every
 * panel's queries are run as Grafana would send them, drawn as a static page
 * (scripts/dashboard-preview/render.ts) and screenshot by headless Chromium. Not part of
 * the test suite (CI has no browser). Each picture's entry in docs/images/dashboards.json
 * holds the SHA-256 of the dashboard JSON it was drawn from and of the PNG, so
 * test/mixin/pictures.test.ts fails when a dashboard changes and its picture does not.
 *
 *   apt-get install -y chromium pngquant prometheus
 *   npx tsx scripts/dashboard-screenshots.ts            # about 15 minutes of real time
 *
 * At --speed 1 (the default) rates and budgets read as they would in production; a faster
 * clock gives more history in less time but inflates every rate by the speed-up.
 */

const HELP = `Usage: npx tsx scripts/dashboard-screenshots.ts [--minutes N] [--speed N] [--out DIR]
  --minutes N   real minutes of data before the pictures are taken (default 15)
  --speed N     simulated seconds per real second (default 1)
  --out DIR     where the PNGs go (default docs/images)
`;

/** Prometheus' default scrape interval, and Grafana's default for a Prometheus data source. */
const SCRAPE_SECONDS = 15;

/** Chromium as the workplace runs it: no sandbox as root, no network of its own. */
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars'];

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function requireTool(name: string, hint: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`${name} is not installed: ${hint}`);
  return found.stdout.trim();
}

function screenshot(chromium: string, html: string, png: string, height: number): void {
  const profile = mkdtempSync(join(tmpdir(), 'monapi-chromium-'));
  try {
    const result = spawnSync(chromium, [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, `--window-size=${PAGE_WIDTH},${height}`, `--screenshot=${png}`, `file://${html}`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (result.status !== 0) throw new Error(`chromium failed (${result.status}): ${result.stderr.slice(-2000)}`);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { minutes: { type: 'string' }, speed: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const minutes = Number(values.minutes ?? 15);
  const speed = Number(values.speed ?? 1);
  if (!(minutes > 0) || !(speed >= 1)) throw new Error(`--minutes must be above 0 and --speed at least 1\n${HELP}`);
  const out = resolve(ROOT, values.out ?? 'docs/images');
  const chromium = requireTool('chromium', 'apt-get install -y chromium');
  const pngquant = requireTool('pngquant', 'apt-get install -y pngquant');

  const run = await startMixinDemo({ speed, scrapeIntervalSeconds: SCRAPE_SECONDS, runMs: minutes * 60_000 + 5 * 60_000 });
  const work = mkdtempSync(join(tmpdir(), 'monapi-preview-'));
  try {
    const { scenario, prometheus } = run;
    process.stdout.write(`demo at ${new Date(scenario.startMs).toISOString()}: ${scenario.offlineHosts.map((h) => h.hostname).join(', ')} offline, ${scenario.downWebsite.name} down from ${new Date(scenario.downWebsite.downFromMs).toISOString()}\n`);
    for (let minute = 1; minute <= minutes; minute++) {
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      process.stdout.write(`  ${minute}/${minutes} minutes of data\n`);
    }

    mkdirSync(out, { recursive: true });
    const end = Math.floor(Date.now() / 1000);
    const demoNowMs = run.demo.clock.now();
    const start = Math.ceil(run.startedSeconds);
    const time = { rangeSeconds: end - start, scrapeIntervalSeconds: SCRAPE_SECONDS, maxDataPoints: 300 };
    const manifest: PictureManifest = {};
    for (const file of readdirSync(join(ROOT, DASHBOARDS_DIR)).sort()) {
      const text = readFileSync(join(ROOT, DASHBOARDS_DIR, file), 'utf8');
      const dashboard = JSON.parse(text) as DashboardJson;
      const selections: Record<string, Selection> = {};
      const { values: variables } = await resolveVariables(dashboard, selections, time, (label, match) => prometheus.labelValues(label, match));
      const results = new Map<number, TargetResult[]>();
      for (const query of panelQueries(dashboard)) {
        const panel = panelTime(time, query.panel, speed);
        const expr = interpolate(query.expr, variables, panel);
        const series = query.instant
          ? (await prometheus.query(expr, end)).map((s) => ({ metric: s.metric, values: [[end, s.value]] as [number, number][] }))
          : await prometheus.queryRange(expr, start, end, intervalSeconds(panel));
        results.set(query.panel.id, [...(results.get(query.panel.id) ?? []), { refId: query.target.refId ?? 'A', series }]);
      }
      const html = renderPreview({
        dashboard,
        results,
        variables: [{ name: 'datasource', text: 'Prometheus' }, ...queryVariables(dashboard).filter((v) => !v.hidden).map((v) => ({ name: v.name, text: 'All' }))],
        range: { text: `Last ${Math.round(time.rangeSeconds / 60)} minutes`, fromSeconds: start, toSeconds: end },
        nowMs: demoNowMs,
      });
      const page = join(work, file.replace(/\.json$/, '.html'));
      writeFileSync(page, html);
      const png = join(out, pictureName(file));
      screenshot(chromium, page, png, pageHeight(dashboard));
      const quantized = spawnSync(pngquant, ['--force', '--skip-if-larger', '--quality=60-90', '--output', png, png], { encoding: 'utf8' });
      if (quantized.status !== 0 && quantized.status !== 98 && quantized.status !== 99) throw new Error(`pngquant failed: ${quantized.stderr}`);
      process.stdout.write(`${png}: ${Math.round(statSync(png).size / 1024)} KiB\n`);
      manifest[pictureName(file)] = { dashboard: `${DASHBOARDS_DIR}/${file}`, dashboardSha256: sha256(text), pngSha256: sha256(readFileSync(png)) };
    }
    writeFileSync(join(out, PICTURES_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    await run.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`dashboard-screenshots: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
