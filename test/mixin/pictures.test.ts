import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DASHBOARDS_DIR, ROOT } from '../../mixin/build.js';
import { PICTURES_DIR, PICTURES_MANIFEST, pictureName, relativeRange, RENDERER_SOURCE, type DashboardTime, type PictureEntry, type PictureManifest } from '../../mixin/pictures.js';
import { MIXIN_WORLD, worldDefinition } from '../support/mixin-scenario.js';

/**
 * The README's pictures show the dashboards as the code makes them now: each picture's
 * manifest entry (docs/images/dashboards.json, written by scripts/dashboard-screenshots.ts)
 * holds the hash of the dashboard JSON it was drawn from and of the picture itself, the range
 * it shows (the dashboard's own, full of data at the real clock's speed), the Node.js that ran
 * the demo (the line package.json requires), and the hashes of the preview renderer and of the
 * demo world's definition. Any of them drifting makes the pictures stale.
 */

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const REGENERATE = 'regenerate the pictures: apt-get install -y chromium pngquant && npx tsx scripts/dashboard-screenshots.ts (takes the range plus 3 minutes)';

/** What the pictures must match, from the code as it is. */
interface Current {
  /** Dashboard file -> its text and time range. */
  readonly dashboards: ReadonlyMap<string, { readonly text: string; readonly time: DashboardTime }>;
  /** package.json's engines.node. */
  readonly engines: string;
  readonly rendererSha256: string;
  readonly worldSha256: string;
}

function current(): Current {
  const files = readdirSync(join(ROOT, DASHBOARDS_DIR)).sort();
  const dashboards = new Map(
    files.map((file) => {
      const text = readFileSync(join(ROOT, DASHBOARDS_DIR, file), 'utf8');
      return [file, { text, time: (JSON.parse(text) as { time: DashboardTime }).time }] as const;
    }),
  );
  const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  return { dashboards, engines, rendererSha256: sha256(readFileSync(join(ROOT, RENDERER_SOURCE), 'utf8')), worldSha256: sha256(JSON.stringify(worldDefinition(MIXIN_WORLD))) };
}

/** Whether a Node.js version (`v24.21.0`) is within a caret range (`^24.11.0`), the form package.json's engines uses. */
function satisfiesCaret(version: string, range: string): boolean {
  const parse = (text: string): number[] | undefined => /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text)?.slice(1).map(Number);
  const caret = /^\^(.+)$/.exec(range);
  if (!caret) throw new Error(`engines.node ${range} is not a caret range: teach satisfiesCaret its form`);
  const [have, want] = [parse(version), parse(caret[1]!)];
  if (!have || !want) return false;
  if (have[0] !== want[0]) return false;
  return have[1]! > want[1]! || (have[1] === want[1] && have[2]! >= want[2]!);
}

/** Per check, the pictures it finds stale: "picture: why". */
const checks = {
  dashboard: (manifest: PictureManifest, now: Current): string[] =>
    [...now.dashboards].flatMap(([file, { text }]) => {
      const entry = manifest[pictureName(file)];
      if (entry?.dashboard !== `${DASHBOARDS_DIR}/${file}`) return [`${pictureName(file)}: drawn from ${entry?.dashboard}`];
      return entry.dashboardSha256 === sha256(text) ? [] : [`${pictureName(file)}: ${file} changed since`];
    }),
  range: (manifest: PictureManifest, now: Current): string[] =>
    [...now.dashboards].flatMap(([file, { time }]) => {
      const entry = manifest[pictureName(file)];
      const problems: string[] = [];
      if (entry?.range?.from !== time.from || entry.range.to !== time.to) problems.push(`${pictureName(file)}: shows ${entry?.range?.from} to ${entry?.range?.to}, the dashboard ${time.from} to ${time.to}`);
      if (!((entry?.dataSeconds ?? 0) >= relativeRange(time).seconds)) problems.push(`${pictureName(file)}: ${entry?.dataSeconds} s of data do not fill ${time.from}`);
      if (entry?.speed !== 1) problems.push(`${pictureName(file)}: the demo ran at speed ${entry?.speed}, which inflates every rate`);
      return problems;
    }),
  node: (manifest: PictureManifest, now: Current): string[] =>
    Object.entries(manifest).flatMap(([picture, entry]) => (typeof entry.node === 'string' && satisfiesCaret(entry.node, now.engines) ? [] : [`${picture}: made with Node.js ${entry.node}, package.json requires ${now.engines}`])),
  renderer: (manifest: PictureManifest, now: Current): string[] =>
    Object.entries(manifest).flatMap(([picture, entry]) => (entry.rendererSha256 === now.rendererSha256 ? [] : [`${picture}: ${RENDERER_SOURCE} changed since`])),
  world: (manifest: PictureManifest, now: Current): string[] =>
    Object.entries(manifest).flatMap(([picture, entry]) => (entry.worldSha256 === now.worldSha256 ? [] : [`${picture}: the demo's world (test/support/mixin-scenario.ts, MIXIN_WORLD) changed since`])),
};

describe('the pictures of the dashboards', () => {
  const now = current();
  const files = [...now.dashboards.keys()];
  const manifestPath = join(ROOT, PICTURES_DIR, PICTURES_MANIFEST);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as PictureManifest;

  it('exist for every dashboard, and for no other', () => {
    expect(Object.keys(manifest).sort()).toEqual(files.map(pictureName).sort());
    const pictures = readdirSync(join(ROOT, PICTURES_DIR)).filter((name) => /^dashboard-.*\.png$/.test(name));
    expect(pictures.sort()).toEqual(files.map(pictureName).sort());
  });

  it('were drawn from the dashboard JSON as it is now', () => {
    expect(checks.dashboard(manifest, now), REGENERATE).toEqual([]);
  });

  it("show each dashboard's own time range, filled with data from a demo at the real clock's speed", () => {
    expect(checks.range(manifest, now), REGENERATE).toEqual([]);
  });

  it('were made with the Node.js line package.json requires', () => {
    expect(checks.node(manifest, now), REGENERATE).toEqual([]);
  });

  it('were drawn by the preview renderer as it is now, from the demo world as it is defined now', () => {
    expect(checks.renderer(manifest, now), REGENERATE).toEqual([]);
    expect(checks.world(manifest, now), REGENERATE).toEqual([]);
  });

  it('are the pictures the manifest was written with', () => {
    for (const [picture, entry] of Object.entries(manifest)) {
      const path = join(ROOT, PICTURES_DIR, picture);
      expect(existsSync(path), picture).toBe(true);
      expect(sha256(readFileSync(path)), `${picture} is not the picture drawn with its manifest entry; ${REGENERATE}`).toBe(entry.pngSha256);
    }
  });

  it('are shown in the README or docs/', () => {
    const pages = [
      readFileSync(join(ROOT, 'README.md'), 'utf8'),
      ...readdirSync(join(ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => readFileSync(join(ROOT, 'docs', name), 'utf8').replaceAll('](images/', `](${PICTURES_DIR}/`)),
    ];
    for (const file of files) expect(pages.some((page) => page.includes(`](${PICTURES_DIR}/${pictureName(file)})`)), pictureName(file)).toBe(true);
  });

  it('are found stale by each check when what it compares drifts', () => {
    const [file, { text, time }] = [...now.dashboards][0]!;
    const picture = pictureName(file);
    const fresh: PictureEntry = {
      dashboard: `${DASHBOARDS_DIR}/${file}`,
      dashboardSha256: sha256(text),
      pngSha256: '',
      range: time,
      dataSeconds: relativeRange(time).seconds,
      speed: 1,
      node: 'v24.21.0',
      rendererSha256: now.rendererSha256,
      worldSha256: now.worldSha256,
    };
    const only = (entry: Partial<PictureEntry>): PictureManifest => ({ [picture]: { ...fresh, ...entry } });
    const one: Current = { ...now, dashboards: new Map([[file, { text, time }]]) };
    for (const check of Object.values(checks)) expect(check(only({}), one)).toEqual([]);
    expect(checks.dashboard(only({ dashboardSha256: sha256(`${text} `) }), one)).toHaveLength(1);
    expect(checks.range(only({ range: { from: 'now-6h', to: 'now' } }), one)).toHaveLength(1);
    expect(checks.range(only({ range: { from: 'now-15m', to: 'now' } }), one)).toHaveLength(1);
    expect(checks.range(only({ dataSeconds: relativeRange(time).seconds - 60 }), one)).toHaveLength(1);
    expect(checks.range(only({ speed: 30 }), one)).toHaveLength(1);
    expect(checks.node(only({ node: 'v20.19.5' }), one)).toHaveLength(1);
    expect(checks.node(only({ node: 'v24.10.0' }), one)).toHaveLength(1);
    expect(checks.node(only({ node: 'v25.0.0' }), one)).toHaveLength(1);
    expect(checks.renderer(only({ rendererSha256: sha256('another renderer') }), one)).toHaveLength(1);
    expect(checks.world(only({ worldSha256: sha256(JSON.stringify(worldDefinition({ ...MIXIN_WORLD, hosts: MIXIN_WORLD.hosts + 1 }))) }), one)).toHaveLength(1);
    // An entry written before these fields existed is stale by every one of them.
    const old = { [picture]: { dashboard: fresh.dashboard, dashboardSha256: fresh.dashboardSha256, pngSha256: '' } } as unknown as PictureManifest;
    for (const name of ['range', 'node', 'renderer', 'world'] as const) expect(checks[name](old, one).length, name).toBeGreaterThan(0);
  });
});
