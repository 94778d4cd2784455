import { describe, expect, it } from 'vitest';
import { createHostFilter, createNameFilter, patternProblem, tagLabel, tagLabelProblem } from './patterns.js';

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

describe('createHostFilter', () => {
  const none = { includeTags: [], excludeTags: [], includeNames: [], excludeNames: [] };
  it.each([
    [none, { hostname: 'web-1', tags: [] }, true],
    [{ ...none, includeTags: ['env:prod'] }, { hostname: 'web-1', tags: ['env:prod', 'role:web'] }, true],
    [{ ...none, includeTags: ['env:prod'] }, { hostname: 'web-1', tags: ['env:staging'] }, false],
    [{ ...none, includeTags: ['env:*'] }, { hostname: 'web-1', tags: ['env:staging'] }, true],
    // A bare tag (the agent allows them) matches only itself.
    [{ ...none, includeTags: ['canary'] }, { hostname: 'web-1', tags: ['canary'] }, true],
    [{ ...none, includeTags: ['canary'] }, { hostname: 'web-1', tags: ['canary:yes'] }, false],
    [{ ...none, excludeTags: ['maintenance'] }, { hostname: 'web-1', tags: ['env:prod', 'maintenance'] }, false],
    [{ ...none, includeNames: ['web-*'] }, { hostname: 'db-1', tags: [] }, false],
    [{ ...none, includeTags: ['env:prod'], includeNames: ['web-*'] }, { hostname: 'web-2', tags: ['env:prod'] }, true],
    [{ ...none, includeTags: ['env:prod'], excludeNames: ['web-2'] }, { hostname: 'web-2', tags: ['env:prod'] }, false],
  ])('%j on %j is %s', (filter, host, expected) => {
    expect(createHostFilter(filter)(host)).toBe(expected);
  });
});

describe('tag labels', () => {
  it.each([
    ['env', 'tag_env'],
    ['team-name', 'tag_team_name'],
    ['k8s.io/zone', 'tag_k8s_io_zone'],
    ['Role', 'tag_Role'],
  ])('%j becomes %s', (key, label) => {
    expect(tagLabel(key)).toEqual({ tagKey: key, labelName: label });
  });

  it.each([
    ['', 'must not be empty'],
    ['env:prod', 'tag key "env:prod" contains ":"; give only the key part of "key:value" tags'],
    ['a b', 'tag key "a b" contains whitespace or a comma'],
    ['---', 'tag key "---" has no letter or digit, so it gives no usable label name'],
  ])('refuses %j', (key, message) => {
    expect(tagLabelProblem(key)).toBe(message);
  });
});
