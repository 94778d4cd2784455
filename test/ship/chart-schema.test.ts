import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { CHART, CI_VALUES, HELMS, readValues, renderError, validateObject, type K8sObject } from './chart-harness.js';

/**
 * values.schema.json refuses wrong values before anything renders, and the templates refuse
 * what a schema cannot express, each with a message that says what to change.
 */

type Values = Record<string, unknown>;

const schema = JSON.parse(readFileSync(`${CHART}/values.schema.json`, 'utf8')) as object;
const defaults = parseDocument(readFileSync(`${CHART}/values.yaml`, 'utf8')).toJS() as Values;
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate = ajv.compile(schema);

function isObject(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Helm's merge: maps merge key by key, anything else replaces. */
function merge(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? merge(current, value) : value;
  }
  return out;
}

function errorsOf(values: Values): string[] {
  if (validate(values)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

const WORKING: Values = merge(defaults, readValues('default-values.yaml'));

describe('values.schema.json', () => {
  it('accepts the defaults merged with every ci values file', () => {
    for (const file of CI_VALUES) expect(errorsOf(merge(defaults, readValues(file))), file).toEqual([]);
  });

  it.each<[string, Values, string]>([
    ['more than one replica without sharding', { replicas: 2 }, '/replicas must be <= 1'],
    ['a misspelt key', { replica: 1 }, '/ must NOT have additional properties'],
    ['sharding.enabled as a string', { sharding: { enabled: 'yes' } }, '/sharding/enabled must be boolean'],
    ['zero replicas', { replicas: 0 }, '/replicas must be >= 1'],
    ['an unknown pull policy', { image: { pullPolicy: 'Sometimes' } }, '/image/pullPolicy must be equal to one of the allowed values'],
    ['a digest without sha256:', { image: { digest: 'abc' } }, '/image/digest must match pattern "^$|^sha256:[a-f0-9]{64}$"'],
    ['an unknown log level', { logLevel: 'verbose' }, '/logLevel must be equal to one of the allowed values'],
    ['an account name the exporter refuses', { config: { accounts: [{ name: 'Prod!', base_url: 'https://m.example.com/api/v2' }] } }, '/config/accounts/0/name must match pattern "^[a-z0-9_-]+$"'],
    ['a base URL of another API version', { config: { accounts: [{ name: 'prod', base_url: 'https://m.example.com/api/v1' }] } }, '/config/accounts/0/base_url must match pattern'],
    ['a key written into the config', { config: { accounts: [{ name: 'prod', base_url: 'https://m.example.com/api/v2', api_key: 'k' }] } }, '/config/accounts/0/api_key must NOT be valid'],
    ['an interval without a unit', { serviceMonitor: { interval: '60' } }, '/serviceMonitor/interval must match pattern'],
    ['a liveness probe on /metrics', { livenessProbe: { httpGet: { path: '/metrics', port: 'http-metrics' } } }, '/livenessProbe/httpGet/path must be equal to one of the allowed values'],
    ['an empty key', { apiKeys: { prod: '' } }, '/apiKeys/prod must NOT have fewer than 1 characters'],
    ['a flag without dashes in extraArgs', { extraArgs: ['log.level=debug'] }, '/extraArgs/0 must match pattern "^--"'],
    ['a misspelt ServiceMonitor limit', { serviceMonitor: { sampleLimt: 1000 } }, '/serviceMonitor must NOT have additional properties'],
    ['a backfill window in words', { backfill: { since: '30 days' } }, '/backfill/since must match pattern'],
    ['a backfill label name with a dash', { backfill: { labels: { 'k8s-cluster': 'x' } } }, '/backfill/labels must match pattern'],
    ['a negative sample limit', { serviceMonitor: { sampleLimit: -1 } }, '/serviceMonitor/sampleLimit must be >= 0'],
    ['target labels as a string', { serviceMonitor: { targetLabels: 'team' } }, '/serviceMonitor/targetLabels must be array'],
    ['a startup probe on /-/ready (it waits a full polling cycle)', { startupProbe: { enabled: true, httpGet: { path: '/-/ready', port: 'http-metrics' } } }, '/startupProbe/httpGet/path must be equal to one of the allowed values'],
    ['an extra container named like the exporter', { extraContainers: [{ name: 'exporter', image: 'x' }] }, '/extraContainers/0/name must NOT be valid'],
    ['an init container without an image', { initContainers: [{ name: 'init' }] }, "/initContainers/0 must have required property 'image'"],
    ['a common label value Kubernetes refuses', { commonLabels: { team: 'obs ervability' } }, '/commonLabels/team must match pattern'],
    ['an extra manifest without a kind', { extraManifests: [{ apiVersion: 'v1', metadata: { name: 'x' } }] }, '/extraManifests/0 must match a schema in anyOf'],
    ['a negative revisionHistoryLimit', { revisionHistoryLimit: -1 }, '/revisionHistoryLimit must be >= 0'],
    ['rollOnConfigChange as a string', { rollOnConfigChange: 'yes' }, '/rollOnConfigChange must be boolean'],
  ])('refuses %s', (_, change, message) => {
    const errors = errorsOf(merge(WORKING, change));
    expect(errors.some((e) => e.startsWith(message)), errors.join('\n')).toBe(true);
  });

  it('allows several replicas with sharding', () => {
    expect(errorsOf(merge(WORKING, { replicas: 4, sharding: { enabled: true } }))).toEqual([]);
  });
});

describe.each(HELMS)('helm %i refuses', (major) => {
  it('more than one replica without sharding, naming replicas and its limit', () => {
    const message = renderError(major, { values: ['default-values.yaml'], set: ['replicas=2'] });
    expect(message).toContain("values don't meet the specifications of the schema(s)");
    expect(message).toMatch(major === 3 ? /- replicas: Must be less than or equal to 1/ : /at '\/replicas': maximum: got 2, want 1/);
  });

  it('a misspelt key', () => {
    expect(renderError(major, { values: ['default-values.yaml'], set: ['shardng.enabled=true'] })).toMatch(/shardng/);
  });

  it.each<[string, string[], string]>([
    ['no account', [], 'config.accounts is empty: add at least one account (name and base_url)'],
    [
      'an account without a key',
      ['config.accounts[0].name=prod', 'config.accounts[0].base_url=https://m.example.com/api/v2'],
      'config.accounts[0] (prod) has no API key: set apiKeys.prod, or existingSecret naming a Secret with an entry "prod", or api_key_env / api_key_file in the account',
    ],
    [
      'a key for no account',
      ['config.accounts[0].name=prod', 'config.accounts[0].base_url=https://m.example.com/api/v2', 'apiKeys.prod=k', 'apiKeys.prd=k'],
      'apiKeys.prd names no account in config.accounts (accounts: prod)',
    ],
    [
      'keys in values beside an existing Secret',
      ['config.accounts[0].name=prod', 'config.accounts[0].base_url=https://m.example.com/api/v2', 'apiKeys.prod=k', 'existingSecret=keys'],
      'existingSecret is set, so the chart makes no Secret: leave apiKeys and marketplaceKey empty',
    ],
    [
      'marketplace lookups without a key',
      ['config.accounts[0].name=prod', 'config.accounts[0].base_url=https://m.example.com/api/v2', 'apiKeys.prod=k', 'config.releases.mode=marketplace'],
      'config.releases.mode is marketplace but no key is given: set marketplaceKey, or existingSecret with an entry "releases.marketplace"',
    ],
  ])('%s, in the templates', (_, set, message) => {
    expect(renderError(major, { set })).toContain(message);
  });

  it('more than one replica without sharding even with the schema skipped, and says why', () => {
    const message = renderError(major, { values: ['default-values.yaml'], set: ['replicas=2'], extraArgs: ['--skip-schema-validation'] });
    expect(message).toContain('replicas is 2 without sharding: every pod would poll every API key and spend its rate budget 2 times');
    expect(message).toContain('scrape it from two Prometheus servers for high availability, or set sharding.enabled: true');
  });
});

describe('manifest validation', () => {
  it('catches an invalid object and a kind it has no schema for', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { replicas: '2', selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    } as K8sObject;
    expect(() => validateObject(deployment)).toThrow(/Deployment x is invalid: .*replicas must be integer/);
    expect(() => validateObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })).toThrow(/no schema to validate this kind against/);
  });
});
