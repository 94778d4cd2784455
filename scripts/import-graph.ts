import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The import graph of the product (src/, tests left out), folder by folder: which folder
 * imports which, and the import circles between modules. `npx tsx scripts/import-graph.ts`
 * prints both; test/architecture/layers.test.ts holds them to docs/architecture.md's layers.
 */

export const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

export interface ModuleImport {
  readonly from: string;
  readonly to: string;
  /** Only types: erased at run time, but still an arrow in the design. */
  readonly typeOnly: boolean;
}

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return productFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

const IMPORT = /^(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm;

/** Every relative import between product modules, paths relative to src/. */
export function productImports(): ModuleImport[] {
  const imports: ModuleImport[] = [];
  for (const file of productFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), (match[2] ?? '').replace(/\.js$/, '.ts'));
      imports.push({ from: relative(SRC, file), to: relative(SRC, target), typeOnly: match[1] !== undefined });
    }
  }
  return imports;
}

/** The folder a module belongs to: `sources/hosts/map.ts` → `sources`; a top-level file is its own. */
export function folderOf(path: string): string {
  const [first] = path.split('/');
  return first?.endsWith('.ts') ? first.slice(0, -3) : (first ?? path);
}

/** Circles of module imports (each reported once, from its smallest module name). */
export function importCircles(imports: readonly ModuleImport[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of imports) {
    let set = edges.get(from);
    if (!set) edges.set(from, (set = new Set()));
    set.add(to);
  }
  const circles = new Map<string, string[]>();
  const visit = (node: string, path: string[], onPath: Set<string>) => {
    for (const next of edges.get(node) ?? []) {
      if (onPath.has(next)) {
        const circle = path.slice(path.indexOf(next));
        const start = circle.indexOf([...circle].sort()[0] ?? next);
        const rotated = [...circle.slice(start), ...circle.slice(0, start)];
        circles.set(rotated.join(' -> '), rotated);
        continue;
      }
      if (visited.has(next)) continue;
      visited.add(next);
      onPath.add(next);
      visit(next, [...path, next], onPath);
      onPath.delete(next);
    }
  };
  const visited = new Set<string>();
  for (const node of edges.keys()) {
    if (visited.has(node)) continue;
    visited.add(node);
    visit(node, [node], new Set([node]));
  }
  return [...circles.values()];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const imports = productImports();
  const arrows = new Map<string, number>();
  for (const { from, to } of imports) {
    const a = folderOf(from);
    const b = folderOf(to);
    if (a !== b) arrows.set(`${a} -> ${b}`, (arrows.get(`${a} -> ${b}`) ?? 0) + 1);
  }
  for (const [arrow, count] of [...arrows].sort()) process.stdout.write(`${arrow} (${count})\n`);
  const circles = importCircles(imports);
  process.stdout.write(`\n${circles.length} import circle(s)\n`);
  for (const circle of circles) process.stdout.write(`  ${circle.join(' -> ')}\n`);
}
