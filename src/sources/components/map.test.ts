import { describe, expect, it } from 'vitest';
import type { Component } from '../../upstream/monitoring/schemas.js';
import { sampleLines } from '../../../test/support/family-lines.js';
import { mapComponents } from './map.js';

const nginx: Component = { id: 'c1', kind: 'web-server', software: 'nginx', name: 'nginx @ web-1', version: '1.27.3', pid: 10 };
const pool: Component = { id: 'c2', kind: 'application-server', software: 'php-fpm', name: 'phpfpm www @ web-1' };

describe('mapComponents', () => {
  it.each([
    {
      name: 'one series per component; missing version is empty',
      input: [nginx, pool],
      want: [
        'monapi_component_info{account="prod",component_kind="application-server",host_uuid="h1",name="phpfpm www @ web-1",software="php-fpm",version=""} 1',
        'monapi_component_info{account="prod",component_kind="web-server",host_uuid="h1",name="nginx @ web-1",software="nginx",version="1.27.3"} 1',
      ],
    },
    { name: 'no components: nothing (the host group retracts them)', input: [], want: [] },
    {
      name: 'identical label sets collapse to one series',
      input: [pool, { ...pool, id: 'c3', pid: 11 }],
      want: [
        'monapi_component_info{account="prod",component_kind="application-server",host_uuid="h1",name="phpfpm www @ web-1",software="php-fpm",version=""} 1',
      ],
    },
    {
      name: 'unknown kind and odd strings are passed on as label values',
      input: [{ id: '', kind: 'queue', software: '', name: 'rabbit "q" \\ 1' }],
      want: [
        'monapi_component_info{account="prod",component_kind="queue",host_uuid="h1",name="rabbit \\"q\\" \\\\ 1",software="",version=""} 1',
      ],
    },
  ])('$name', ({ input, want }) => {
    expect(sampleLines(mapComponents({ host_uuid: 'h1', components: input }, { account: 'prod' }))).toEqual(want);
  });
});
