import { describe, expect, it } from 'vitest';
import { folderOf, importCircles, productImports } from '../../scripts/import-graph.js';
import { longFunctions } from '../../scripts/long-functions.js';

/**
 * The product's folders in layers, bottom first, as docs/architecture.md draws them: a
 * module may import from its own folder and from any lower layer, never upwards, and no
 * module imports itself back through others. A new folder has to be given a layer here.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['lib', 'version'],
  ['config'],
  ['upstream'],
  ['budget'],
  ['exposition'],
  ['limits', 'state', 'sharding', 'remote-write'],
  ['sources'],
  ['scheduler', 'backfill'],
  ['server'],
  ['exporter'],
  ['command-line'],
  ['cli'],
];

const layerOf = new Map(LAYERS.flatMap((folders, layer) => folders.map((folder): [string, number] => [folder, layer])));

describe('the layers of src/', () => {
  const imports = productImports();

  it('reads the real import graph', () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.some((i) => i.from.startsWith('sources/') && i.to.startsWith('upstream/'))).toBe(true);
  });

  it('places every folder in a layer', () => {
    const folders = new Set(imports.flatMap((i) => [folderOf(i.from), folderOf(i.to)]));
    expect([...folders].filter((folder) => !layerOf.has(folder))).toEqual([]);
  });

  it('imports only downwards or within a folder', () => {
    const upwards = imports
      .filter((i) => folderOf(i.from) !== folderOf(i.to))
      .filter((i) => (layerOf.get(folderOf(i.from)) ?? -1) <= (layerOf.get(folderOf(i.to)) ?? Infinity))
      .map((i) => `${i.from} -> ${i.to}`);
    expect(upwards).toEqual([]);
  });

  it('has no import circle', () => {
    expect(importCircles(imports).map((circle) => circle.join(' -> '))).toEqual([]);
  });
});

describe('the length of product functions', () => {
  it('keeps every function within 100 lines, or says above it why it is long', () => {
    const unexplained = longFunctions(100)
      .filter((f) => !/\blong\b/i.test(f.comment))
      .map((f) => `${f.file} ${f.name}: ${f.lines} lines`);
    expect(unexplained).toEqual([]);
  });

  it('finds long functions at all (the check above is not empty by accident)', () => {
    expect(longFunctions(60).length).toBeGreaterThan(3);
  });
});

describe('the composition root', () => {
  it('startExporter stays a short composition of the modules in src/exporter/', () => {
    const all = longFunctions(0);
    const start = all.find((f) => f.file === 'exporter/index.ts' && f.name === 'startExporter');
    expect(start?.lines).toBeLessThanOrEqual(80);
  });
});
