import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DASHBOARDS_DIR, ROOT } from '../../mixin/build.js';
import { PICTURES_DIR, PICTURES_MANIFEST, pictureName, type PictureManifest } from '../../mixin/pictures.js';

/**
 * The README's pictures show the dashboards as they are: each picture's manifest entry
 * (docs/images/dashboards.json, written by scripts/dashboard-screenshots.ts) holds the hash
 * of the dashboard JSON it was drawn from, and of the picture itself.
 */

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const REGENERATE = 'regenerate the pictures: apt-get install -y chromium pngquant && npx tsx scripts/dashboard-screenshots.ts';

describe('the pictures of the dashboards', () => {
  const files = readdirSync(join(ROOT, DASHBOARDS_DIR)).sort();
  const manifestPath = join(ROOT, PICTURES_DIR, PICTURES_MANIFEST);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as PictureManifest;

  it('exist for every dashboard, and for no other', () => {
    expect(Object.keys(manifest).sort()).toEqual(files.map(pictureName).sort());
    const pictures = readdirSync(join(ROOT, PICTURES_DIR)).filter((name) => /^dashboard-.*\.png$/.test(name));
    expect(pictures.sort()).toEqual(files.map(pictureName).sort());
  });

  it('were drawn from the dashboard JSON as it is now', () => {
    const stale = files.filter((file) => manifest[pictureName(file)]?.dashboardSha256 !== sha256(readFileSync(join(ROOT, DASHBOARDS_DIR, file), 'utf8')));
    expect(stale, `these dashboards changed since their pictures were taken; ${REGENERATE}`).toEqual([]);
    for (const file of files) expect(manifest[pictureName(file)]?.dashboard).toBe(`${DASHBOARDS_DIR}/${file}`);
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
});
