import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError } from './errors.js';
import { parseConfig } from '../exporter/config.js';

/**
 * Whatever text an operator (or a broken template) hands the loader, it either returns a
 * configuration or throws a ConfigError whose every issue names a path: never another
 * exception, never a hang, never the value of a key-looking field in the message.
 */

const RUNS = { numRuns: 300 };
const KEY = 'k-fuzz-secret-9f3c';
const env = { MONAPI_KEY: KEY };

function outcome(text: string): 'ok' | ConfigError {
  try {
    parseConfig(text, { env, readFile: () => KEY });
    return 'ok';
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('30s', '5m', '1h', '-1', '0', 'https://m.example.com/api/v2'));
const key = fc.oneof(
  fc.constantFrom('name', 'base_url', 'api_key_env', 'api_key_file', 'cadence', 'series', 'hosts', 'metrics', 'include', 'headroom', 'rate_limit', 'http', 'timeout', 'deadline', 'ca_file', 'releases', 'projects', 'exporter', 'accounts', 'api_key', 'sources', 'series_limit'),
  fc.string({ maxLength: 8 }),
);
const tree = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node'), { maxLength: 4 }), fc.dictionary(key, tie('node'), { maxKeys: 5 })),
})).node;

function checkError(result: 'ok' | ConfigError): void {
  if (result === 'ok') return;
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) expect(issue.path).not.toBe('');
  expect(result.message).not.toContain(KEY);
}

describe('config loader fuzz', () => {
  it.each([
    // Found by the fuzzer: the first under releases, the second (seed 1068882298) in an account.
    ['releases:\n  - - <<: [""]\n', 'releases[0][0]', 7],
    ['accounts:\n  - name:\n      - - <<: 30s\n', 'accounts[0].name[0][0]', 11],
    ['defaults: &d 5\naccounts:\n  - <<: *d\n', 'accounts[0]', 5],
  ])('a merge key over something that is not a mapping is a ConfigError that says where: %j', (text, path, column) => {
    const result = outcome(text);
    expect(result).toBeInstanceOf(ConfigError);
    expect((result as ConfigError).issues).toEqual([{ path, message: 'a merge key (<<) takes a mapping, an alias of one, or a list of those', line: text.split('\n').findIndex((l) => l.includes('<<')) + 1, column }]);
  });

  it('a merge of mappings still merges', () => {
    expect(outcome('accounts:\n  - <<: { base_url: https://m.example.com/api/v2 }\n    name: prod\n    api_key_env: MONAPI_KEY\n')).toBe('ok');
  });

  it('20 000 nested brackets (a stack overflow in older yaml releases, GHSA-48c2-rrv3-qjmp) are a ConfigError', () => {
    const result = outcome(`accounts: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`);
    expect(result).toBeInstanceOf(ConfigError);
  });

  it('arbitrary text: a Config or a ConfigError, nothing else', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), (text) => checkError(outcome(text))), RUNS);
  });

  it('arbitrary YAML trees under the real top-level keys: a Config or a ConfigError', () => {
    const document = fc.record({ exporter: tree, accounts: fc.oneof(tree, fc.array(fc.dictionary(key, tree, { maxKeys: 6 }), { maxLength: 3 })), releases: tree }, { requiredKeys: [] });
    fc.assert(fc.property(document, (doc) => checkError(outcome(stringify(doc)))), RUNS);
  });

  it('a valid account with one field replaced by anything: a Config or a ConfigError naming that account', () => {
    const field = fc.constantFrom('name', 'base_url', 'headroom', 'concurrency', 'cadence', 'ingest_delay', 'metrics', 'hosts', 'sources', 'http', 'series_limit', 'tag_labels', 'metric_overrides');
    fc.assert(
      fc.property(field, tree, (name, value) => {
        const account: Record<string, unknown> = { name: 'prod', base_url: 'https://m.example.com/api/v2', api_key_env: 'MONAPI_KEY', [name]: value };
        const result = outcome(stringify({ accounts: [account] }));
        checkError(result);
        if (result !== 'ok') expect(result.issues.some((issue) => issue.path.startsWith('accounts'))).toBe(true);
      }),
      RUNS,
    );
  });
});
