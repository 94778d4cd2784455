import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/config/duration.js';
import { loadConfig } from '../../src/exporter/config.js';
import { SOURCES } from '../../src/sources/index.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '../../examples');
const examplePath = join(examples, 'config.yaml');

describe('examples/config.yaml', () => {
  const env = { MONAPI_PROD_API_KEY: 'prod-example-key' };
  const readFile = (path: string): string => {
    if (path === join(examples, 'keys/staging.key')) return 'staging-example-key\n';
    return readFileSync(path, 'utf8');
  };

  it('loads, with its two accounts and release projects', () => {
    const config = loadConfig(examplePath, env, readFile);
    expect(config.accounts.map((a) => a.name)).toEqual(['prod', 'staging']);
    expect(config.accounts.map((a) => a.apiKey.reveal())).toEqual(['prod-example-key', 'staging-example-key']);
    expect(config.accounts[1]?.authScheme).toBe('x-api-key');
    expect(config.accounts[0]?.sources.series?.cadenceMs.series).toBe(120_000);
    expect(config.releases?.mode).toBe('free');
    expect((config.releases?.sources.releases?.settings as { projects: unknown[] }).projects).toHaveLength(4);
  });

  it('shows every cadence with its default and minimum', () => {
    const text = readFileSync(examplePath, 'utf8');
    const cadences = SOURCES.flatMap((source) => Object.entries(source.cadences ?? {}));
    expect(cadences.length).toBeGreaterThan(10);
    for (const [name, spec] of cadences) {
      expect(text).toMatch(new RegExp(`^\\s*#?\\s*${name}: \\S+\\s+# ${spec.default}\\s*/ ${formatDuration(spec.minMs)}\\b`, 'm'));
    }
  });

  it('still loads with every commented-out key switched on', () => {
    // Uncommenting the optional keys must give a valid file too, so the example shows real syntax.
    const original = readFileSync(examplePath, 'utf8').split('\n');
    const uncommented = original.map((line) => line.replace(/^(\s*)# ((?:[a-z_]+:|- )[^#]*?)(\s+#.*)?$/, '$1$2'));
    expect(uncommented.filter((line, i) => line !== original[i]).length).toBeGreaterThan(25);
    const text = uncommented
      .join('\n')
      // The two key sources are exclusive, and the marketplace keys are for the other mode.
      .replace(/^\s*api_key_file: \/run\/secrets\/monapi-prod.*$/m, '')
      .replace(/^\s*(marketplace_\w+|header_names|key|host): .*$/gm, '')
      .replace(/^\s*header_names:\s*$/m, '');
    const config = loadConfig(examplePath, env, (path) => (path === examplePath ? text : readFile(path)));
    expect(config.exporter).toEqual({ metricPrefix: 'monapi_', sampleTimestamps: false, nullHandling: 'skip' });
    expect(config.accounts[0]?.sources.websites?.settings).toEqual({ includeNames: [], excludeNames: [] });
  });
});
