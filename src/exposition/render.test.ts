import { describe, expect, it } from 'vitest';
import { everyType } from '../../test/exposition/fixtures.js';
import { ExpositionError } from './format.js';
import type { FamilySamples } from './model.js';
import { renderOpenMetrics } from './render-openmetrics.js';
import { renderText } from './render-text.js';

interface Case {
  readonly what: string;
  readonly family: FamilySamples;
  readonly text: string;
  readonly openMetrics: string;
}

const cases: Case[] = [
  {
    what: 'gauge with labels',
    family: { spec: { name: 'g', type: 'gauge', help: 'A gauge.' }, samples: [{ labels: { a: 'x', b: 'y' }, value: 2.5 }] },
    text: '# HELP g A gauge.\n# TYPE g gauge\ng{a="x",b="y"} 2.5\n',
    openMetrics: '# HELP g A gauge.\n# TYPE g gauge\ng{a="x",b="y"} 2.5\n',
  },
  {
    what: 'gauge without labels and without help',
    family: { spec: { name: 'g', type: 'gauge', help: '' }, samples: [{ labels: {}, value: 7 }] },
    text: '# TYPE g gauge\ng 7\n',
    openMetrics: '# TYPE g gauge\ng 7\n',
  },
  {
    what: 'gauge with NaN and infinities',
    family: {
      spec: { name: 'g', type: 'gauge', help: 'h' },
      samples: [
        { labels: { k: 'nan' }, value: NaN },
        { labels: { k: 'pos' }, value: Infinity },
        { labels: { k: 'neg' }, value: -Infinity },
      ],
    },
    text: '# HELP g h\n# TYPE g gauge\ng{k="nan"} NaN\ng{k="pos"} +Inf\ng{k="neg"} -Inf\n',
    openMetrics: '# HELP g h\n# TYPE g gauge\ng{k="nan"} NaN\ng{k="pos"} +Inf\ng{k="neg"} -Inf\n',
  },
  {
    what: 'label value and help escaping',
    family: {
      spec: { name: 'g', type: 'gauge', help: 'say "hi"\\\nbye' },
      samples: [{ labels: { v: 'a"b\\c\nd' }, value: 1 }],
    },
    text: '# HELP g say "hi"\\\\\\nbye\n# TYPE g gauge\ng{v="a\\"b\\\\c\\nd"} 1\n',
    openMetrics: '# HELP g say \\"hi\\"\\\\\\nbye\n# TYPE g gauge\ng{v="a\\"b\\\\c\\nd"} 1\n',
  },
  {
    what: 'gauge with a unit',
    family: { spec: { name: 'disk_size_bytes', type: 'gauge', help: 'Size.', unit: 'bytes' }, samples: [{ labels: {}, value: 1e21 }] },
    text: '# HELP disk_size_bytes Size.\n# TYPE disk_size_bytes gauge\ndisk_size_bytes 1e+21\n',
    openMetrics: '# HELP disk_size_bytes Size.\n# TYPE disk_size_bytes gauge\n# UNIT disk_size_bytes bytes\ndisk_size_bytes 1e+21\n',
  },
  {
    what: 'counter',
    family: { spec: { name: 'hits_total', type: 'counter', help: 'Hits.' }, samples: [{ labels: { path: '/' }, value: 12 }] },
    text: '# HELP hits_total Hits.\n# TYPE hits_total counter\nhits_total{path="/"} 12\n',
    openMetrics: '# HELP hits Hits.\n# TYPE hits counter\nhits_total{path="/"} 12\n',
  },
  {
    what: 'counter with a unit',
    family: {
      spec: { name: 'cpu_seconds_total', type: 'counter', help: 'CPU.', unit: 'seconds' },
      samples: [{ labels: {}, value: 0.25 }],
    },
    text: '# HELP cpu_seconds_total CPU.\n# TYPE cpu_seconds_total counter\ncpu_seconds_total 0.25\n',
    openMetrics: '# HELP cpu_seconds CPU.\n# TYPE cpu_seconds counter\n# UNIT cpu_seconds seconds\ncpu_seconds_total 0.25\n',
  },
  {
    what: 'info (value forced to 1)',
    family: { spec: { name: 'build_info', type: 'info', help: 'Build.' }, samples: [{ labels: { version: '1.0' }, value: 0 }] },
    text: '# HELP build_info Build.\n# TYPE build_info gauge\nbuild_info{version="1.0"} 1\n',
    openMetrics: '# HELP build Build.\n# TYPE build info\nbuild_info{version="1.0"} 1\n',
  },
  {
    what: 'histogram',
    family: {
      spec: { name: 'lat_seconds', type: 'histogram', help: 'Latency.', unit: 'seconds' },
      samples: [{ labels: { r: 'a' }, buckets: [[0.5, 1], [1, 3]], sum: 2.5, count: 4 }],
    },
    text:
      '# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n' +
      'lat_seconds_bucket{r="a",le="0.5"} 1\nlat_seconds_bucket{r="a",le="1"} 3\nlat_seconds_bucket{r="a",le="+Inf"} 4\n' +
      'lat_seconds_sum{r="a"} 2.5\nlat_seconds_count{r="a"} 4\n',
    openMetrics:
      '# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n# UNIT lat_seconds seconds\n' +
      'lat_seconds_bucket{r="a",le="0.5"} 1\nlat_seconds_bucket{r="a",le="1"} 3\nlat_seconds_bucket{r="a",le="+Inf"} 4\n' +
      'lat_seconds_sum{r="a"} 2.5\nlat_seconds_count{r="a"} 4\n',
  },
  {
    what: 'histogram without labels or buckets',
    family: { spec: { name: 'h', type: 'histogram', help: '' }, samples: [{ labels: {}, buckets: [], sum: 0, count: 0 }] },
    text: '# TYPE h histogram\nh_bucket{le="+Inf"} 0\nh_sum 0\nh_count 0\n',
    openMetrics: '# TYPE h histogram\nh_bucket{le="+Inf"} 0\nh_sum 0\nh_count 0\n',
  },
  {
    what: 'summary',
    family: {
      spec: { name: 'req_seconds', type: 'summary', help: 'Requests.', unit: 'seconds' },
      samples: [{ labels: { h: 'a' }, quantiles: [[0.5, 0.2], [0.95, NaN]], sum: 12.5, count: 40 }],
    },
    text:
      '# HELP req_seconds Requests.\n# TYPE req_seconds summary\n' +
      'req_seconds{h="a",quantile="0.5"} 0.2\nreq_seconds{h="a",quantile="0.95"} NaN\nreq_seconds_sum{h="a"} 12.5\nreq_seconds_count{h="a"} 40\n',
    openMetrics:
      '# HELP req_seconds Requests.\n# TYPE req_seconds summary\n# UNIT req_seconds seconds\n' +
      'req_seconds{h="a",quantile="0.5"} 0.2\nreq_seconds{h="a",quantile="0.95"} NaN\nreq_seconds_sum{h="a"} 12.5\nreq_seconds_count{h="a"} 40\n',
  },
  {
    what: 'family without samples',
    family: { spec: { name: 'empty', type: 'gauge', help: 'Nothing yet.' }, samples: [] },
    text: '# HELP empty Nothing yet.\n# TYPE empty gauge\n',
    openMetrics: '# HELP empty Nothing yet.\n# TYPE empty gauge\n',
  },
];

describe('renderText', () => {
  it.each(cases)('$what', ({ family, text }) => {
    expect(renderText([family])).toBe(text);
  });

  it('renders an empty document as nothing', () => {
    expect(renderText([])).toBe('');
  });

  it.each<[string, FamilySamples[]]>([
    ['an invalid name', [{ spec: { name: 'bad-name', type: 'gauge', help: '' }, samples: [] }]],
    [
      'a family given twice',
      [
        { spec: { name: 'g', type: 'gauge', help: '' }, samples: [] },
        { spec: { name: 'g', type: 'gauge', help: '' }, samples: [] },
      ],
    ],
  ])('refuses %s', (_what, families) => {
    expect(() => renderText(families)).toThrow(ExpositionError);
  });
});

describe('renderOpenMetrics', () => {
  it.each(cases)('$what', ({ family, openMetrics }) => {
    expect(renderOpenMetrics([family])).toBe(`${openMetrics}# EOF\n`);
    expect(renderOpenMetrics([family], { eof: false })).toBe(openMetrics);
  });

  it('renders an empty document as just # EOF', () => {
    expect(renderOpenMetrics([])).toBe('# EOF\n');
  });

  it('refuses a counter and a gauge that share the OpenMetrics family name', () => {
    const families: FamilySamples[] = [
      { spec: { name: 'x_total', type: 'counter', help: '' }, samples: [] },
      { spec: { name: 'x', type: 'gauge', help: '' }, samples: [] },
    ];
    expect(() => renderOpenMetrics(families)).toThrow(/x appears twice/);
  });

  it('keeps # EOF last and _total out of TYPE lines for every family type', () => {
    const body = renderOpenMetrics(everyType);
    const lines = body.split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.at(-2)).toBe('# EOF');
    expect(lines.filter((l) => l === '# EOF')).toHaveLength(1);
    const typeLines = lines.filter((l) => l.startsWith('# TYPE '));
    expect(typeLines).toHaveLength(everyType.length);
    for (const line of typeLines) expect(line).not.toMatch(/_total |_info /);
  });
});
