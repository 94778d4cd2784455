import type { FamilySamples } from '../../src/exposition/model.js';

/**
 * Test helper: families as sorted one-line strings, `name{a="x",b="y"} value`, labels
 * sorted by name. Lets table tests state the expected output as plain text. Histograms
 * render as `name{...} count=N sum=S`.
 */
export function sampleLines(families: readonly FamilySamples[]): string[] {
  const lines: string[] = [];
  for (const family of families) {
    for (const sample of family.samples) {
      const labels = Object.keys(sample.labels)
        .sort()
        .map((k) => `${k}=${JSON.stringify(sample.labels[k])}`)
        .join(',');
      const value = 'value' in sample ? String(sample.value) : `count=${sample.count} sum=${sample.sum}`;
      lines.push(`${family.spec.name}{${labels}} ${value}`);
    }
  }
  return lines.sort();
}

/** Test helper: `name type unit?` of each family, sorted. */
export function familyHeads(families: readonly FamilySamples[]): string[] {
  return families.map((f) => [f.spec.name, f.spec.type, f.spec.unit].filter((x) => x !== undefined).join(' ')).sort();
}

/**
 * Test helper: feeds inputs to a stateful mapping one poll after another, threading the
 * state, and returns every poll's result.
 */
export function runSuccessivePolls<I, S, R extends { readonly state: S }>(inputs: readonly I[], initial: S, map: (input: I, state: S) => R): R[] {
  const results: R[] = [];
  let state = initial;
  for (const input of inputs) {
    const result = map(input, state);
    results.push(result);
    state = result.state;
  }
  return results;
}
