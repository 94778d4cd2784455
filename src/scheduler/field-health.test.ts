import { describe, expect, it } from 'vitest';
import type { FieldReport } from '../upstream/fields/resolve.js';
import { FieldHealth } from './field-health.js';

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
