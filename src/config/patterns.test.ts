import { describe, expect, it } from 'vitest';
import { createNameFilter, patternProblem } from './patterns.js';

describe('patternProblem', () => {
  it.each([
    ['web-*', 'name'],
    ['db-?', 'name'],
    ['env:prod', 'tag'],
    ['env:*', 'tag'],
    ['nginx.http.status.*', 'metric'],
    ['system.load.?', 'metric'],
  ] as const)('accepts %j as a %s pattern', (pattern, kind) => {
    expect(patternProblem(pattern, kind)).toBeUndefined();
  });

  it.each([
    ['', 'name', 'must not be empty'],
    ['web 1', 'name', 'pattern "web 1" contains whitespace'],
    ['web-[12]', 'name', 'pattern "web-[12]" uses [...], which is not supported: the only wildcards are * (any run of characters) and ? (one character)'],
    ['web-{a,b}', 'name', 'pattern "web-{a,b}" uses {...}, which is not supported: list each alternative as its own pattern'],
    ['nginx.**', 'metric', 'pattern "nginx.**" contains **; a single * already matches across dots'],
    ['a,b', 'tag', 'tag pattern "a,b" contains a comma; list each tag as its own item'],
    ['Nginx.*', 'metric', 'metric pattern "Nginx.*" may only contain lowercase letters, digits, ".", "_", "-", "|" and "/" (per-device names such as system.io.iops_r|sda) and the wildcards * and ?'],
  ] as const)('refuses %j as a %s pattern', (pattern, kind, message) => {
    expect(patternProblem(pattern, kind)).toBe(message);
  });
});

describe('createNameFilter', () => {
  it.each([
    [{ include: [], exclude: [] }, 'anything', true],
    [{ include: ['web-*'], exclude: [] }, 'web-1', true],
    [{ include: ['web-*'], exclude: [] }, 'db-web-1', false],
    [{ include: ['web-*'], exclude: ['web-canary*'] }, 'web-canary-2', false],
    [{ include: [], exclude: ['*.test'] }, 'shop.test', false],
    [{ include: ['nginx.*'], exclude: [] }, 'nginx.http.request.count', true],
  ])('%j on %j is %s', (filter, name, expected) => {
    expect(createNameFilter(filter)(name)).toBe(expected);
  });
});
