import { describe, expect, it } from 'vitest';
import { tagLabel, tagLabelProblem } from './settings.js';

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
