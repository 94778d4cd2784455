import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldReport, ListReport } from '../upstream/fields/resolve.js';
import { FieldHealth, type ListState } from './field-health.js';

const FIELDS = { interval: { about: 'seconds a point covers' }, value: { about: "a point's value" } };
const answer = (missing: string[]): FieldReport => ({
  found: Object.fromEntries(Object.keys(FIELDS).filter((f) => !missing.includes(f)).map((f) => [f, { path: f, sample: '1', configured: false }])),
  missing,
  essentialMissing: [],
  items: 1,
  paths: ['other'],
});
const missingOf = (health: FieldHealth) => health.states().filter((s) => s.missing).map((s) => s.field);

describe('field health over the answers of many targets', () => {
  it('says nothing before the first answer', () => {
    expect(new FieldHealth(FIELDS, () => {}).states()).toEqual([]);
  });

  it('reports a field missing only while no target\'s latest answer carries it', () => {
    const told: string[] = [];
    const health = new FieldHealth(FIELDS, (field) => told.push(field));
    health.record('/hosts/a', answer(['value']), 0);
    expect(missingOf(health)).toEqual(['value']);
    health.record('/hosts/b', answer([]), 0);
    expect(missingOf(health)).toEqual([]);
    // b's newer answer lacks it too: now no answer carries it.
    health.record('/hosts/b', answer(['value']), 0);
    expect(missingOf(health)).toEqual(['value']);
    expect(told).toEqual(['value', 'value']);
    health.record('/hosts/a', answer([]), 0);
    expect(health.states().find((s) => s.field === 'value')?.found).toEqual({ path: 'value', sample: '1', configured: false });
  });

  it('forgets the answers of targets gone for a day, once there are many', () => {
    const health = new FieldHealth(FIELDS, () => {});
    health.record('/hosts/old', answer([]), 0);
    for (let i = 0; i < 64; i++) health.record(`/hosts/${i}`, answer(['value']), 0);
    expect(missingOf(health)).toEqual([]);
    health.record('/hosts/new', answer(['value']), 25 * 3_600_000);
    expect(missingOf(health)).toEqual(['value']);
  });

  it("keeps each field's count right when thousands of targets answer again and again", () => {
    const health = new FieldHealth(FIELDS, () => {});
    for (let round = 0; round < 3; round++) for (let i = 0; i < 3000; i++) health.record(`/hosts/${i}`, answer(i === 2999 && round === 2 ? ['value'] : []), round);
    expect(missingOf(health)).toEqual([]);
    expect(health.states()).toHaveLength(2);
  });
});

const listAnswer = (list: ListReport | undefined): FieldReport => ({ ...answer([]), ...(list && { list }) });

/** What `listState` says, worked out the slow way: over every kept answer, in the order they came. */
function listStateOver(answers: ReadonlyMap<string, ListReport | undefined>): ListState | undefined {
  const lists = [...answers].flatMap(([target, report]) => (report === undefined ? [] : [{ target, report }]));
  const short = lists.filter((l) => l.report.incomplete !== undefined);
  const shown = short[0] ?? lists.at(-1);
  if (shown === undefined) return undefined;
  return { lists: lists.length, pages: lists.reduce((sum, l) => sum + (l.report.pages ?? 1), 0), incomplete: short.length, ...shown };
}

describe('how the lists of the latest answers were read', () => {
  const list = (pages: number, incomplete?: string): ListReport => ({ path: 'items', length: pages * 10, pages, ...(incomplete && { incomplete }) });

  it('shows the first short list, else the latest list, over answers that come, change and stop being lists', () => {
    const step = fc.record({
      target: fc.integer({ min: 0, max: 5 }).map((i) => `/hosts/${i}`),
      list: fc.option(fc.record({ pages: fc.integer({ min: 1, max: 4 }), short: fc.boolean() }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const health = new FieldHealth(FIELDS, () => {});
        const kept = new Map<string, ListReport | undefined>();
        for (const { target, list: shape } of steps) {
          const report = shape && list(shape.pages, shape.short ? 'the page cap' : undefined);
          health.record(target, listAnswer(report), 0);
          kept.delete(target);
          kept.set(target, report);
          expect(health.listState()).toEqual(listStateOver(kept));
        }
      }),
    );
  });

  it('forgets the list of a target gone for a day', () => {
    const health = new FieldHealth(FIELDS, () => {});
    health.record('/hosts/gone', listAnswer(list(2, 'a failed page')), 0);
    for (let i = 0; i < 64; i++) health.record(`/hosts/${i}`, listAnswer(list(1)), 3 * 3_600_000);
    expect(health.listState()).toMatchObject({ lists: 65, pages: 66, incomplete: 1, target: '/hosts/gone' });
    health.record('/hosts/new', listAnswer(undefined), 25 * 3_600_000);
    expect(health.listState()).toMatchObject({ lists: 64, pages: 64, incomplete: 0, target: '/hosts/63' });
  });
});
