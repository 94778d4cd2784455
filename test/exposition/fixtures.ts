import type { FamilySamples } from '../../src/exposition/model.js';

/** One family of every type, with escaping, special values, a unit, a histogram and a summary. */
export const everyType: readonly FamilySamples[] = [
  {
    spec: { name: 'demo_temperature_celsius', type: 'gauge', help: 'Temperature with "quotes" and a \\ backslash.', unit: 'celsius' },
    samples: [
      { labels: { host: 'alpha', room: 'a "quoted"\\ value\nwith newline' }, value: 21.5 },
      { labels: { host: 'beta', room: 'plain' }, value: NaN },
      { labels: { host: 'gamma', room: 'hot' }, value: Infinity },
      { labels: { host: 'delta', room: 'cold' }, value: -Infinity },
    ],
  },
  {
    spec: { name: 'demo_requests_total', type: 'counter', help: 'Requests served.' },
    samples: [
      { labels: { code: '200' }, value: 1027 },
      { labels: { code: '500' }, value: 3 },
    ],
  },
  {
    spec: { name: 'demo_build_info', type: 'info', help: 'Build facts.' },
    samples: [{ labels: { version: '1.2.3', revision: 'abc123' }, value: 1 }],
  },
  {
    spec: { name: 'demo_request_duration_seconds', type: 'histogram', help: 'Request latency.', unit: 'seconds' },
    samples: [
      { labels: { route: '/a' }, buckets: [[0.1, 2], [0.5, 5], [1, 7]], sum: 4.25, count: 8 },
      { labels: { route: '/b' }, buckets: [[0.1, 0], [0.5, 0], [1, 0]], sum: 0, count: 0 },
    ],
  },
  {
    spec: { name: 'demo_upstream_duration_seconds', type: 'summary', help: 'Upstream latency.', unit: 'seconds' },
    samples: [{ labels: { route: '/a' }, quantiles: [[0.5, 0.12], [0.95, 0.4]], sum: 9.5, count: 60 }],
  },
  {
    spec: { name: 'demo_up', type: 'gauge', help: 'Whether the last poll worked.' },
    samples: [{ labels: {}, value: 1 }],
  },
];
