import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const FILES = [join(ROOT, 'README.md'), join(ROOT, 'CHANGELOG.md'), ...markdownUnder(join(ROOT, 'docs'))];

/** Text outside fenced code blocks, where `](...)` is a link and not code. */
function prose(path: string): string {
  return readFileSync(path, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(path: string): Set<string> {
  return new Set([...prose(path).matchAll(/^#+\s+(.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

/** Every relative link of every file, with where it points. */
const links = FILES.flatMap((file) =>
  [...prose(file).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => {
      const [path = '', anchor] = target.split('#');
      return { from: relative(ROOT, file), target, resolved: path === '' ? file : join(dirname(file), path), anchor };
    }),
);

describe('links between the README, CHANGELOG.md and docs/', () => {
  it('are many enough that the check means something', () => {
    expect(links.length).toBeGreaterThan(50);
  });

  it('point at files that exist', () => {
    const broken = links.filter(({ resolved }) => !existsSync(resolved)).map(({ from, target }) => `${from}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('point at headings that exist, when they name one', () => {
    const broken = links
      .filter(({ resolved, anchor }) => anchor !== undefined && resolved.endsWith('.md') && existsSync(resolved) && !anchorsOf(resolved).has(anchor))
      .map(({ from, target }) => `${from}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('reach every docs/ page from the README', () => {
    const fromReadme = new Set(links.filter(({ from }) => from === 'README.md').map(({ resolved }) => relative(ROOT, resolved)));
    const pages = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    expect(pages.filter((page) => !fromReadme.has(page))).toEqual([]);
  });
});
