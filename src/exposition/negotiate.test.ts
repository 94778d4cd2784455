import { describe, expect, it } from 'vitest';
import { acceptsGzip, negotiate, negotiateFormat, type ExpositionFormat } from './negotiate.js';

const PROMETHEUS_3 =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';
const PROMETHEUS_2_43 =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const PROMETHEUS_2_OLD = 'application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
// Prometheus 3 with scrape_protocols: [PrometheusText0.0.4, OpenMetricsText1.0.0]
const PROMETHEUS_3_TEXT_FIRST =
  'text/plain;version=0.0.4;q=0.5,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.4,*/*;q=0.3';

describe('negotiateFormat', () => {
  it.each<[string, string | undefined, ExpositionFormat]>([
    ['Prometheus 3.x default', PROMETHEUS_3, 'openmetrics'],
    ['Prometheus 2.43+ default', PROMETHEUS_2_43, 'openmetrics'],
    ['Prometheus 2.x before 2.43', PROMETHEUS_2_OLD, 'openmetrics'],
    ['Prometheus 3.x preferring text', PROMETHEUS_3_TEXT_FIRST, 'text'],
    ['missing header', undefined, 'text'],
    ['empty header', '', 'text'],
    ['*/*', '*/*', 'text'],
    ['text/plain', 'text/plain', 'text'],
    ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'text'],
    ['an unknown type', 'application/json', 'text'],
    ['OpenMetrics without version', 'application/openmetrics-text', 'openmetrics'],
    ['OpenMetrics 1.0.0', 'application/openmetrics-text; version=1.0.0', 'openmetrics'],
    ['OpenMetrics 0.0.1', 'application/openmetrics-text;version=0.0.1', 'openmetrics'],
    ['OpenMetrics quoted version', 'application/openmetrics-text;version="1.0.0"', 'openmetrics'],
    ['OpenMetrics in upper case', 'Application/OpenMetrics-Text; Version=1.0.0', 'openmetrics'],
    ['an unsupported OpenMetrics version', 'application/openmetrics-text;version=2.0.0', 'text'],
    ['OpenMetrics refused with q=0', 'application/openmetrics-text;q=0,text/plain;q=0.1', 'text'],
    ['OpenMetrics below */*', 'application/openmetrics-text;q=0.3,*/*;q=0.9', 'text'],
    ['OpenMetrics above text', 'text/plain;q=0.2,application/openmetrics-text;q=0.9', 'openmetrics'],
    ['equal q-values favour OpenMetrics', 'text/plain,application/openmetrics-text', 'openmetrics'],
    ['a malformed q-value does not win', 'application/openmetrics-text;q=abc,text/plain;q=0.1', 'text'],
    ['garbage', ';;,,;q=', 'text'],
  ])('%s -> %s', (_what, accept, expected) => {
    expect(negotiateFormat(accept)).toBe(expected);
  });
});

/** What Prometheus 3.16.0 sends, recorded from the real binary (scripts/prometheus3) per scrape config. */
const PROMETHEUS_3_16 = {
  default:
    'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3',
  'metric_name_validation_scheme: legacy':
    'application/openmetrics-text;version=1.0.0;escaping=underscores;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=underscores;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3',
  'metric_name_escaping_scheme: dots':
    'application/openmetrics-text;version=1.0.0;escaping=dots;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=dots;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3',
  'scrape_protocols: [PrometheusText1.0.0, PrometheusText0.0.4]': 'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.7,text/plain;version=0.0.4;q=0.6,*/*;q=0.5',
  'scrape_protocols: [OpenMetricsText2.0.0, OpenMetricsText1.0.0, PrometheusText0.0.4]':
    'application/openmetrics-text;version=2.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.5,*/*;q=0.4',
  'scrape_protocols: [PrometheusProto, OpenMetricsText1.0.0, PrometheusText0.0.4]':
    'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.5,*/*;q=0.4',
} as const;

describe('negotiate with what Prometheus 3.16 sends', () => {
  it.each<[keyof typeof PROMETHEUS_3_16, ExpositionFormat]>([
    ['default', 'openmetrics'],
    ['metric_name_validation_scheme: legacy', 'openmetrics'],
    ['metric_name_escaping_scheme: dots', 'openmetrics'],
    // Text 1.0.0 differs from 0.0.4 only by quoted UTF-8 names, which this exporter never has.
    ['scrape_protocols: [PrometheusText1.0.0, PrometheusText0.0.4]', 'text'],
    // OpenMetrics 2.0.0 is not spoken here: the 1.0.0 it also accepts is the answer.
    ['scrape_protocols: [OpenMetricsText2.0.0, OpenMetricsText1.0.0, PrometheusText0.0.4]', 'openmetrics'],
    ['scrape_protocols: [PrometheusProto, OpenMetricsText1.0.0, PrometheusText0.0.4]', 'openmetrics'],
  ])('%s -> %s', (config, expected) => {
    const answer = negotiate(PROMETHEUS_3_16[config], 'gzip');
    expect(answer.format).toBe(expected);
    expect(answer.contentType).toBe(expected === 'openmetrics' ? 'application/openmetrics-text; version=1.0.0; charset=utf-8' : 'text/plain; version=0.0.4; charset=utf-8');
    expect(answer.gzip).toBe(true);
  });
});

describe('acceptsGzip', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['identity', false],
    ['br', false],
    ['gzip;q=0', false],
    ['gzip; q=0.0', false],
    ['gzip;q=0.5', true],
    ['*', true],
    ['*;q=0', false],
    ['gzip;q=0, *', false],
    ['deflate, *;q=0.1', true],
  ])('%j -> %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('negotiate', () => {
  it('returns the OpenMetrics content type for Prometheus 3 with gzip', () => {
    expect(negotiate(PROMETHEUS_3, 'gzip')).toEqual({
      format: 'openmetrics',
      contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8',
      gzip: true,
    });
  });

  it('returns the text content type without Accept and without gzip', () => {
    expect(negotiate(undefined, undefined)).toEqual({
      format: 'text',
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      gzip: false,
    });
  });
});
