import { describe, expect, it } from 'vitest';
import { globMatcher, globToRegExp } from './glob.js';

describe('globToRegExp', () => {
  it.each([
    { pattern: 'web-*', text: 'web-1', want: true },
    { pattern: 'web-*', text: 'db-web-1', want: false },
    { pattern: 'web-?', text: 'web-12', want: false },
    { pattern: 'web-??', text: 'web-12', want: true },
    { pattern: 'system.cpu.*', text: 'system.cpu.user', want: true },
    { pattern: 'system.cpu.*', text: 'systemXcpu.user', want: false },
    { pattern: 'nginx.*', text: 'nginx.http.request.time.max', want: true },
    { pattern: '*', text: '', want: true },
    { pattern: '', text: '', want: true },
    { pattern: '', text: 'x', want: false },
    { pattern: 'a+b(c)[d]{e}|^$\\', text: 'a+b(c)[d]{e}|^$\\', want: true },
    { pattern: 'Web', text: 'web', want: false },
    { pattern: 'env:prod', text: 'env:prod', want: true },
    { pattern: 'line*', text: 'line1\nline2', want: true },
  ])('$pattern ~ $text → $want', ({ pattern, text, want }) => {
    expect(globToRegExp(pattern).test(text)).toBe(want);
  });
});

describe('globMatcher', () => {
  it('matches any of the patterns; an empty list matches nothing', () => {
    const match = globMatcher(['a*', 'b?']);
    expect(['a', 'abc', 'bx', 'b', 'c'].filter(match)).toEqual(['a', 'abc', 'bx']);
    expect(globMatcher([])('anything')).toBe(false);
  });
});
