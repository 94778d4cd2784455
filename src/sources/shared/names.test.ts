import { describe, expect, it } from 'vitest';
import { isDiscouragedLabelName, prefixedLabelName, sanitizeName } from './names.js';

describe('sanitizeName', () => {
  it.each([
    { name: 'dots become underscores', input: 'system.cpu.user', want: 'system_cpu_user' },
    { name: 'dashes and spaces', input: 'php-fpm pool', want: 'php_fpm_pool' },
    { name: 'leading digit gets an underscore', input: '1xx', want: '_1xx' },
    { name: 'case kept', input: 'MemTotal', want: 'MemTotal' },
    { name: 'colons removed', input: 'a:b', want: 'a_b' },
    { name: 'non-ASCII replaced per code unit', input: 'é', want: '_' },
    { name: 'empty', input: '', want: '_' },
  ])('$name', ({ input, want }) => {
    expect(sanitizeName(input)).toBe(want);
  });
});

describe('prefixedLabelName', () => {
  it.each([
    { name: 'plain key', prefix: 'tag_', raw: 'env', want: 'tag_env' },
    { name: 'invalid characters', prefix: 'tag_', raw: 'team-name.x', want: 'tag_team_name_x' },
    { name: 'digit start is fine after prefix', prefix: 'tag_', raw: '9lives', want: 'tag_9lives' },
    { name: 'empty key', prefix: 'tag_', raw: '', want: 'tag_' },
  ])('$name', ({ prefix, raw, want }) => {
    expect(prefixedLabelName(prefix, raw)).toBe(want);
  });

  it.each(['__x_', '1_', 'a-'])('rejects prefix %j that cannot give a valid label name', (prefix) => {
    expect(() => prefixedLabelName(prefix, 'x')).toThrow(/prefix/);
  });
});

describe('isDiscouragedLabelName', () => {
  it.each([
    { input: 'job', want: true },
    { input: 'type', want: true },
    { input: '__name__', want: true },
    { input: 'host_type', want: false },
    { input: 'tag_env', want: false },
  ])('$input → $want', ({ input, want }) => {
    expect(isDiscouragedLabelName(input)).toBe(want);
  });
});
