import { describe, expect, it } from 'vitest';
import { SharedNameLists } from './name-lists.js';

describe('SharedNameLists', () => {
  it('gives hosts with the same names one frozen list', () => {
    const lists = new SharedNameLists();
    const held: (readonly string[])[] = [];
    const first = lists.share(['system.cpu.user', 'system.load.1'], () => held);
    held.push(first);
    const second = lists.share(['system.cpu.user', 'system.load.1'], () => held);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toEqual(['system.cpu.user', 'system.load.1']);
  });

  it('keeps lists apart that differ in order, content or by a separator inside a name', () => {
    const lists = new SharedNameLists();
    const a = lists.share(['a', 'b'], () => []);
    expect(lists.share(['b', 'a'], () => [])).not.toBe(a);
    expect(lists.share(['a,b'], () => [])).toEqual(['a,b']);
    expect(lists.share(['a', 'b', 'c'], () => [])).toEqual(['a', 'b', 'c']);
    expect(lists.size).toBe(4);
  });

  it('drops the lists no host holds once they outnumber those in use, and keeps those in use', () => {
    const lists = new SharedNameLists();
    const kept = lists.share(['kept'], () => []);
    for (let i = 0; i < 100; i++) lists.share([`gone.${i}`], () => [kept]);
    expect(lists.size).toBeLessThanOrEqual(16);
    expect(lists.share(['kept'], () => [kept])).toBe(kept);
  });

  it.each([
    ['the same names in another order, some repeated', ['c', 'a', 'b', 'a'], true],
    ['the same names', ['a', 'b', 'c'], true],
    ['one name fewer', ['a', 'b'], false],
    ['one name fewer, another repeated to the same length', ['a', 'b', 'b'], false],
    ['one name more', ['a', 'b', 'c', 'd'], false],
    ['one name replaced', ['a', 'b', 'x'], false],
    ['nothing', [], false],
  ])('tells whether names are exactly a shared list without sorting them: %s', (_case, names, expected) => {
    const lists = new SharedNameLists();
    const list = lists.share(['a', 'b', 'c'], () => []);
    expect(lists.holdsExactly(list, names)).toBe(expected);
  });
});
