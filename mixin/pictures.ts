/**
 * The README's pictures of the dashboards (docs/images/dashboard-*.png, drawn by
 * scripts/dashboard-screenshots.ts) and the manifest beside them that ties each picture to
 * what it was drawn from: the dashboard JSON, its time range, the Node.js that ran the demo,
 * the preview renderer and the demo's world. test/mixin/pictures.test.ts holds them to the
 * code as it is.
 */

export const PICTURES_DIR = 'docs/images';
export const PICTURES_MANIFEST = 'dashboards.json';
/** The preview renderer: a picture drawn by another renderer is stale. */
export const RENDERER_SOURCE = 'scripts/dashboard-preview/render.ts';

/** A dashboard's time range as its JSON has it (`time`). */
export interface DashboardTime {
  readonly from: string;
  readonly to: string;
}

export interface PictureEntry {
  /** The dashboard file, relative to the repository root. */
  readonly dashboard: string;
  /** SHA-256 of that file's text when the picture was taken. */
  readonly dashboardSha256: string;
  /** SHA-256 of the PNG. */
  readonly pngSha256: string;
  /** The range the picture shows: the dashboard's own. */
  readonly range: DashboardTime;
  /** Real seconds of data Prometheus had scraped when the picture was taken: the range is full when this is at least as long. */
  readonly dataSeconds: number;
  /** Simulated seconds per real second of the demo: 1, or every rate reads that much too high. */
  readonly speed: number;
  /** The Node.js that ran the demo's exporter (`process.version`). */
  readonly node: string;
  /** SHA-256 of RENDERER_SOURCE. */
  readonly rendererSha256: string;
  /** SHA-256 of the demo world's definition (test/support/mixin-scenario.ts, worldDefinition). */
  readonly worldSha256: string;
}

/** By picture file name. */
export type PictureManifest = Record<string, PictureEntry>;

/** grafana-dashboards/monapi-hosts.json -> dashboard-hosts.png */
export function pictureName(dashboardFile: string): string {
  return `dashboard-${dashboardFile.replace(/^monapi-/, '').replace(/\.json$/, '.png')}`;
}

const UNITS: Record<string, readonly [seconds: number, name: string]> = {
  s: [1, 'second'],
  m: [60, 'minute'],
  h: [3_600, 'hour'],
  d: [86_400, 'day'],
  w: [604_800, 'week'],
};

/**
 * A range that ends now (`now-1h` to `now`): its length and the text of Grafana's time picker
 * ("Last 1 hour", "Last 6 hours"). @throws Error for a range that is not relative to now
 */
export function relativeRange(time: DashboardTime): { seconds: number; text: string } {
  const match = /^now-(\d+)([smhdw])$/.exec(time.from);
  if (!match || time.to !== 'now') throw new Error(`the time range ${time.from} to ${time.to} does not end now: the pictures show a range that does`);
  const amount = Number(match[1]);
  const [seconds, name] = UNITS[match[2]!]!;
  return { seconds: amount * seconds, text: `Last ${amount} ${name}${amount === 1 ? '' : 's'}` };
}
