import { describe, expect, it } from 'vitest';
import { renderText } from '../../exposition/render-text.js';
import { EMPTY_RELEASE_STATE, mapReleaseLookup, parseTagDate } from './map.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const ANSWERED = NOW - 1_800_000;
const nginx = {
  version: '1.27.3',
  rawVersion: '1.27.3',
  type: 'release',
  tagDate: '2024-11-26 15:17:46+00:00',
  producedAtMs: ANSWERED,
  freshness: 'age_header' as const,
};

describe('mapReleaseLookup', () => {
  it.each([
    {
      name: 'a release with every part',
      outcome: { ok: true as const, release: nginx },
      major: undefined,
      want: [
        'monapi_release_info{project="nginx",major="",version="1.27.3",release_type="release"} 1',
        'monapi_release_version_major{project="nginx",major=""} 1',
        'monapi_release_version_minor{project="nginx",major=""} 27',
        'monapi_release_version_patch{project="nginx",major=""} 3',
        `monapi_release_timestamp_seconds{project="nginx",major=""} ${Date.UTC(2024, 10, 26, 15, 17, 46) / 1000}`,
        'monapi_release_lookup_success{project="nginx",major=""} 1',
        `monapi_release_last_success_timestamp_seconds{project="nginx",major=""} ${NOW / 1000}`,
        `monapi_release_answer_timestamp_seconds{project="nginx",major=""} ${ANSWERED / 1000}`,
      ],
    },
    {
      name: 'a two-part version within a major line, without a type or date',
      outcome: { ok: true as const, release: { version: '4.20', rawVersion: 'v4.20', producedAtMs: NOW, freshness: 'fetch_time' as const } },
      major: '4',
      want: [
        'monapi_release_info{project="nginx",major="4",version="4.20",release_type=""} 1',
        'monapi_release_version_minor{project="nginx",major="4"} 20',
        'monapi_release_version_patch{project="nginx",major="4"} 0',
      ],
    },
    {
      name: 'a major line with a dot is its own label value',
      outcome: { ok: true as const, release: { version: '1.26.2', rawVersion: '1.26.2', producedAtMs: NOW, freshness: 'fetch_time' as const } },
      major: '1.26',
      want: ['monapi_release_info{project="nginx",major="1.26",version="1.26.2",release_type=""} 1'],
    },
    {
      name: 'a failed first lookup shows only the failure',
      outcome: { ok: false as const },
      major: undefined,
      want: ['monapi_release_lookup_success{project="nginx",major=""} 0'],
    },
  ])('$name', ({ outcome, major, want }) => {
    const { families } = mapReleaseLookup(outcome, EMPTY_RELEASE_STATE, { project: 'nginx', major, nowMs: NOW });
    const text = renderText(families);
    for (const line of want) expect(text).toContain(line);
    if (!outcome.ok) expect(text).not.toContain('monapi_release_info{');
  });

  it('keeps the last known release after a failure, marked as not successful', () => {
    const first = mapReleaseLookup({ ok: true, release: nginx }, EMPTY_RELEASE_STATE, { project: 'nginx', major: undefined, nowMs: NOW });
    const later = NOW + 7_200_000;
    const failed = mapReleaseLookup({ ok: false }, first.state, { project: 'nginx', major: undefined, nowMs: later });
    const text = renderText(failed.families);
    expect(text).toContain('monapi_release_info{project="nginx",major="",version="1.27.3",release_type="release"} 1');
    expect(text).toContain('monapi_release_lookup_success{project="nginx",major=""} 0');
    expect(text).toContain(`monapi_release_last_success_timestamp_seconds{project="nginx",major=""} ${NOW / 1000}`);
  });

  it('gives no version parts for an unparsable version but still the info', () => {
    const { families } = mapReleaseLookup(
      { ok: true, release: { version: 'latest', rawVersion: 'latest', producedAtMs: NOW, freshness: 'fetch_time' } },
      EMPTY_RELEASE_STATE,
      { project: 'x', major: undefined, nowMs: NOW },
    );
    const text = renderText(families);
    expect(text).toContain('version="latest"');
    expect(text).not.toContain('monapi_release_version_major{');
  });
});

describe('parseTagDate', () => {
  it.each([
    ['2020-12-15 14:41:39+00:00', Date.UTC(2020, 11, 15, 14, 41, 39)],
    ['2020-12-15T14:41:39Z', Date.UTC(2020, 11, 15, 14, 41, 39)],
    ['2020-12-15 16:41:39+0200', Date.UTC(2020, 11, 15, 14, 41, 39)],
    ['2020-12-15', Date.UTC(2020, 11, 15)],
    ['2020-12-15 14:41', Date.UTC(2020, 11, 15, 14, 41)],
    ['yesterday', undefined],
    ['', undefined],
    ['2020-13-45 99:99:99+00:00', undefined],
  ])('%s', (text, want) => {
    expect(parseTagDate(text)).toBe(want);
  });
});
