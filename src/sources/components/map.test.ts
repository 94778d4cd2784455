import { describe, expect, it } from 'vitest';
import type { Component } from './decode.js';
import { sampleLines } from '../../../test/support/family-lines.js';
import { componentName, mapComponents } from './map.js';

const SHA = 'f'.repeat(64);
const nginx: Component = { id: SHA, type: 'nginx', display_name: 'nginx @ web-1', version: '1.27.3' };
const pool: Component = { id: 'c2', type: 'phpfpm_pool', display_name: 'phpfpm www @ web-1', name: 'www' };
const H = 'account="prod",host_uuid="h1"';

describe('mapComponents', () => {
  it.each([
    {
      name: 'one series per component, named by its display name; a missing version is empty',
      input: [nginx, pool],
      want: [
        `monapi_component_info{${H},component="nginx @ web-1",type="nginx",version="1.27.3"}`,
        `monapi_component_info{${H},component="phpfpm www @ web-1",type="phpfpm_pool",version=""}`,
      ],
    },
    { name: 'no components: nothing (the host group retracts them)', input: [], want: [] },
    {
      name: 'identical label sets collapse to one series',
      input: [pool, { ...pool, id: 'c3', pid: 11 }],
      want: [`monapi_component_info{${H},component="phpfpm www @ web-1",type="phpfpm_pool",version=""}`],
    },
    {
      name: 'without a display name: the name; without a name either: the id; no type: empty',
      input: [{ id: SHA, type: 'mysql', version: '8.0.36' }, { id: SHA, name: 'varnish @ cache-1' }],
      want: [
        `monapi_component_info{${H},component="${SHA}",type="mysql",version="8.0.36"}`,
        `monapi_component_info{${H},component="varnish @ cache-1",type="",version=""}`,
      ],
    },
    {
      name: 'odd strings are passed on as label values',
      input: [{ display_name: 'rabbit "q" \\ 1', type: 'queue' }],
      want: [`monapi_component_info{${H},component="rabbit \\"q\\" \\\\ 1",type="queue",version=""}`],
    },
  ])('$name', ({ input, want }) => {
    // The path's host is used whether or not the items (or the body) carry one.
    const got = sampleLines(mapComponents({ host_uuid: undefined, components: input }, { account: 'prod', hostUuid: 'h1' }));
    expect(got).toEqual(want.map((line) => `${sortLabels(line)} 1`));
  });

  it('names a component by display name, else name, else id', () => {
    expect([nginx, { id: 'x', name: 'y' }, { id: 'x' }].map(componentName)).toEqual(['nginx @ web-1', 'y', 'x']);
  });
});

/** sampleLines sorts labels by name; the table states them in the documented order. */
function sortLabels(line: string): string {
  const match = /^(\w+)\{(.*)\}$/.exec(line);
  if (!match) return line;
  const labels = (match[2] ?? '').match(/\w+="(?:[^"\\]|\\.)*"/g) ?? [];
  return `${match[1]}{${[...labels].sort().join(',')}}`;
}
