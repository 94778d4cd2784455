import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DASHBOARDS_DIR, ROOT } from '../mixin/build.js';
import { PICTURES_DIR, PICTURES_MANIFEST, pictureName, relativeRange, RENDERER_SOURCE, type DashboardTime, type PictureManifest } from '../mixin/pictures.js';
import { dataPanels, intervalSeconds, interpolate, panelQueries, panelTime, queryVariables, resolveVariables, type DashboardJson } from '../test/support/grafana.js';
import { startMixinDemo } from '../test/support/mixin-demo.js';
import { MIXIN_WORLD, worldDefinition } from '../test/support/mixin-scenario.js';
import type { RunningPrometheus } from '../test/support/prometheus.js';
import { PAGE_WIDTH, pageHeight, renderPreview, type TargetResult } from './dashboard-preview/render.js';

/**
 * The pictures of the dashboards in docs/dashboards.md and the README
 * (docs/images/dashboard-*.png), made from real data: the demo at a moment with a host
 * offline, a website outage and a host of every server kind online, scraped by a real
 * Prometheus with the mixin's rules; every panel's queries are run as Grafana would send them
 * over the dashboard's own time range (its `time.from`: the last hour), drawn as a static page
 * (scripts/dashboard-preview/render.ts) and screenshot by headless Chromium. Not part of the
 * test suite (CI has no browser, and it takes the range in real time).
 *
 *   apt-get install -y chromium pngquant prometheus
 *   npx tsx scripts/dashboard-screenshots.ts > screenshots.log 2>&1 &   # the range + 3 minutes of real time
 *
 * The clock runs at speed 1: a faster one would fill the range sooner but inflate every rate
 * by the speed-up. It refuses to write any picture while a panel has no data, and names the
 * panels. Each picture's entry in docs/images/dashboards.json records what it was drawn from
 * (the dashboard JSON's hash, the range, the seconds of data, the speed, the Node.js version,
 * the renderer's and the world's hashes), so test/mixin/pictures.test.ts fails when any of
 * them drifts from the code.
 */

const HELP = `Usage: npx tsx scripts/dashboard-screenshots.ts [--out DIR] [--minutes N]
  --out DIR     where the PNGs and the manifest go (default docs/images)
  --minutes N   a trial: N minutes of data and range instead of each dashboard's own
                (only with --out elsewhere than docs/images)
`;

/** Prometheus' default scrape interval, and Grafana's default for a Prometheus data source. */
const SCRAPE_SECONDS = 15;
/** Real time from Prometheus' start to the start of the range: the first polling cycle, scrapes, and rates' first windows. */
const WARM_UP_SECONDS = 180;
/** The website outage starts this long before the pictures and lasts past them, so that they show it and its alert firing. */
const OUTAGE_SHOWN_MS = 20 * 60_000;
const OUTAGE_MIN_MS = 30 * 60_000;

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

interface Board {
  readonly file: string;
  readonly text: string;
  readonly dashboard: DashboardJson & { readonly time?: DashboardTime };
  readonly range: DashboardTime;
  readonly seconds: number;
  readonly rangeText: string;
}

function boards(trialMinutes: number | undefined): Board[] {
  return readdirSync(join(ROOT, DASHBOARDS_DIR))
    .sort()
    .map((file) => {
      const text = readFileSync(join(ROOT, DASHBOARDS_DIR, file), 'utf8');
      const dashboard = JSON.parse(text) as Board['dashboard'];
      if (!dashboard.time) throw new Error(`${file} has no time range`);
      const range = trialMinutes === undefined ? { from: dashboard.time.from, to: dashboard.time.to } : { from: `now-${trialMinutes}m`, to: 'now' };
      const { seconds, text: rangeText } = relativeRange(range);
      return { file, text, dashboard, range, seconds, rangeText };
    });
}

/** Every panel's queries as Grafana sends them over the range that ends at `end`, by panel id. */
async function runQueries(board: Board, prometheus: RunningPrometheus, end: number): Promise<Map<number, TargetResult[]>> {
  const start = end - board.seconds;
  const time = { rangeSeconds: board.seconds, scrapeIntervalSeconds: SCRAPE_SECONDS, maxDataPoints: 300 };
  const { values: variables } = await resolveVariables(board.dashboard, {}, time, (label, match) => prometheus.labelValues(label, match));
  const results = new Map<number, TargetResult[]>();
  for (const query of panelQueries(board.dashboard)) {
    const panel = panelTime(time, query.panel);
    const expr = interpolate(query.expr, variables, panel);
    const series = query.instant
      ? (await prometheus.query(expr, end)).map((s) => ({ metric: s.metric, values: [[end, s.value]] as [number, number][] }))
      : await prometheus.queryRange(expr, start, end, intervalSeconds(panel));
    results.set(query.panel.id, [...(results.get(query.panel.id) ?? []), { refId: query.target.refId ?? 'A', series }]);
  }
  return results;
}

/** Panels that would say "No data": none of their queries gave a finite value. */
function emptyPanels(board: Board, results: ReadonlyMap<number, readonly TargetResult[]>): string[] {
  return dataPanels(board.dashboard)
    .filter((panel) => !(results.get(panel.id) ?? []).some((r) => r.series.some((s) => s.values.some(([, v]) => Number.isFinite(v)))))
    .map((panel) => `${board.dashboard.title} / ${panel.title}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { minutes: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const out = resolve(ROOT, values.out ?? PICTURES_DIR);
  const trialMinutes = values.minutes === undefined ? undefined : Number(values.minutes);
  if (trialMinutes !== undefined && !(Number.isInteger(trialMinutes) && trialMinutes > 0)) throw new Error(`--minutes must be a whole number above 0\n${HELP}`);
  if (trialMinutes !== undefined && out === resolve(ROOT, PICTURES_DIR)) throw new Error(`the pictures in ${PICTURES_DIR} show each dashboard's own range; --minutes is for a trial with --out elsewhere`);
  const chromium = requireTool('chromium', 'apt-get install -y chromium');
  const pngquant = requireTool('pngquant', 'apt-get install -y pngquant');
  const shown = boards(trialMinutes);
  const rangeSeconds = Math.max(...shown.map((b) => b.seconds));
  const runMs = (WARM_UP_SECONDS + rangeSeconds) * 1000;

  const run = await startMixinDemo({
    speed: 1,
    scrapeIntervalSeconds: SCRAPE_SECONDS,
    runMs: runMs + 5 * 60_000,
    outage: { leadMs: Math.max(4 * 60_000, runMs - OUTAGE_SHOWN_MS), minMs: OUTAGE_MIN_MS },
  });
  const work = mkdtempSync(join(tmpdir(), 'monapi-preview-'));
  try {
    const { scenario, prometheus } = run;
    process.stdout.write(
      `demo at ${new Date(scenario.startMs).toISOString()}: ${scenario.offlineHosts.map((h) => `${h.account}/${h.hostname}`).join(', ')} offline, ${scenario.downWebsite.name} down from ${new Date(scenario.downWebsite.downFromMs).toISOString()}; pictures at ${new Date(run.startedSeconds * 1000 + runMs).toISOString()}\n`,
    );
    for (let waited = 0; Date.now() < run.startedSeconds * 1000 + runMs; waited++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(60_000, Math.max(0, run.startedSeconds * 1000 + runMs - Date.now()))));
      if (waited % 5 === 4) process.stdout.write(`  ${Math.round(Date.now() / 1000 - run.startedSeconds)} of ${runMs / 1000} s of data\n`);
    }

    const end = Math.floor(Date.now() / 1000);
    const demoNowMs = run.demo.clock.now();
    const dataSeconds = end - Math.ceil(run.startedSeconds);
    const drawn: { board: Board; results: Map<number, TargetResult[]> }[] = [];
    for (const board of shown) drawn.push({ board, results: await runQueries(board, prometheus, end) });
    const empty = drawn.flatMap(({ board, results }) => emptyPanels(board, results));
    if (empty.length > 0) throw new Error(`no pictures written: ${empty.length === 1 ? 'a panel has' : `${empty.length} panels have`} no data in the demo's world: ${empty.join('; ')}`);

    mkdirSync(out, { recursive: true });
    const rendererSha256 = sha256(readFileSync(join(ROOT, RENDERER_SOURCE), 'utf8'));
    const worldSha256 = sha256(JSON.stringify(worldDefinition(MIXIN_WORLD)));
    const manifest: PictureManifest = {};
    for (const { board, results } of drawn) {
      const html = renderPreview({
        dashboard: board.dashboard,
        results,
        variables: [{ name: 'datasource', text: 'Prometheus' }, ...queryVariables(board.dashboard).filter((v) => !v.hidden).map((v) => ({ name: v.name, text: 'All' }))],
        range: { text: board.rangeText, fromSeconds: end - board.seconds, toSeconds: end },
        nowMs: demoNowMs,
      });
      const page = join(work, board.file.replace(/\.json$/, '.html'));
      writeFileSync(page, html);
      const png = join(out, pictureName(board.file));
      screenshot(chromium, page, png, pageHeight(board.dashboard));
      const quantized = spawnSync(pngquant, ['--force', '--skip-if-larger', '--quality=60-90', '--output', png, png], { encoding: 'utf8' });
      if (quantized.status !== 0 && quantized.status !== 98 && quantized.status !== 99) throw new Error(`pngquant failed: ${quantized.stderr}`);
      process.stdout.write(`${png}: ${Math.round(statSync(png).size / 1024)} KiB\n`);
      manifest[pictureName(board.file)] = {
        dashboard: `${DASHBOARDS_DIR}/${board.file}`,
        dashboardSha256: sha256(board.text),
        pngSha256: sha256(readFileSync(png)),
        range: board.range,
        dataSeconds,
        speed: 1,
        node: process.version,
        rendererSha256,
        worldSha256,
      };
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
