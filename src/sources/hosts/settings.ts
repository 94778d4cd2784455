import { z } from 'zod';
import { globList, list, section } from '../../config/schema.js';
import type { Report, SettingsInput } from '../../config/source-spec.js';
import { prefixedLabelName } from '../shared/names.js';
import type { HostFilters } from './map.js';

export interface TagLabel {
  /** The host tag key, as written before the colon in `env:prod`. */
  readonly tagKey: string;
  /** The Prometheus label it becomes: `tag_` plus the sanitised key, e.g. `tag_team_name`. */
  readonly labelName: string;
}

export const TAG_LABEL_PREFIX = 'tag_';

/** Problem with one `tag_labels` entry, or undefined. */
export function tagLabelProblem(key: string): string | undefined {
  const quoted = JSON.stringify(key);
  if (key.trim() === '') return 'must not be empty';
  if (key.includes(':')) return `tag key ${quoted} contains ":"; give only the key part of "key:value" tags`;
  if (/[\s,]/.test(key)) return `tag key ${quoted} contains whitespace or a comma`;
  if (!/[A-Za-z0-9]/.test(key)) return `tag key ${quoted} has no letter or digit, so it gives no usable label name`;
  return undefined;
}

export function tagLabel(tagKey: string): TagLabel {
  return { tagKey, labelName: prefixedLabelName(TAG_LABEL_PREFIX, tagKey) };
}

/** The account keys of the hosts source: which hosts to poll, and which tags become labels. */
export const HOST_KEYS = {
  hosts: section({
    include_tags: globList('tag', []),
    exclude_tags: globList('tag', []),
    include_names: globList('name', []),
    exclude_names: globList('name', []),
  }),
  tag_labels: list(
    z.string().superRefine((key, ctx) => {
      const problem = tagLabelProblem(key);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    [],
  ),
};

export interface HostSettings {
  readonly filters: HostFilters;
  readonly tagLabels: readonly TagLabel[];
}

interface RawHostKeys {
  readonly hosts: { include_tags: string[]; exclude_tags: string[]; include_names: string[]; exclude_names: string[] };
  readonly tag_labels: string[];
}

export function hostSettings({ section: raw }: SettingsInput, report: Report): HostSettings {
  // The schema above made these keys; the loader hands every section over untyped.
  const { hosts, tag_labels: tagKeys } = raw as unknown as RawHostKeys;
  const labelsByName = new Map<string, string>();
  const tagLabels = tagKeys.map((tagKey, index) => {
    const label = tagLabel(tagKey);
    const previous = labelsByName.get(label.labelName);
    if (previous !== undefined) {
      report(
        ['tag_labels', index],
        previous === tagKey ? `tag key ${JSON.stringify(tagKey)} is listed twice` : `tag keys ${JSON.stringify(previous)} and ${JSON.stringify(tagKey)} both become the label ${label.labelName}`,
      );
    }
    labelsByName.set(label.labelName, tagKey);
    return label;
  });
  return {
    filters: { includeTags: hosts.include_tags, excludeTags: hosts.exclude_tags, includeNames: hosts.include_names, excludeNames: hosts.exclude_names },
    tagLabels,
  };
}
