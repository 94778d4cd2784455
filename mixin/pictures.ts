/**
 * The README's pictures of the dashboards (docs/images/dashboard-*.png, drawn by
 * scripts/dashboard-screenshots.ts) and the manifest beside them that ties each picture to
 * the dashboard JSON it was drawn from.
 */

export const PICTURES_DIR = 'docs/images';
export const PICTURES_MANIFEST = 'dashboards.json';

export interface PictureEntry {
  /** The dashboard file, relative to the repository root. */
  readonly dashboard: string;
  /** SHA-256 of that file's text when the picture was taken. */
  readonly dashboardSha256: string;
  /** SHA-256 of the PNG. */
  readonly pngSha256: string;
}

/** By picture file name. */
export type PictureManifest = Record<string, PictureEntry>;

/** grafana-dashboards/monapi-hosts.json -> dashboard-hosts.png */
export function pictureName(dashboardFile: string): string {
  return `dashboard-${dashboardFile.replace(/^monapi-/, '').replace(/\.json$/, '.png')}`;
}
