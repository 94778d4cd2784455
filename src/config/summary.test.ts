import { describe, expect, it } from 'vitest';
import { METRIC_CATALOGUE } from '../upstream/monitoring/metric-catalogue.js';
import { parseConfig, summarizeConfig } from '../exporter/config.js';

describe('summarizeConfig', () => {
  const config = parseConfig(
    `accounts:
  - name: prod
    base_url: https://mon.example.com/api/v2
    api_key_env: PROD_KEY
    metrics:
      include: ["system.cpu.*"]
    sources:
      websites: false
      checks: false
releases:
  mode: marketplace
  marketplace_base_url: https://releases.p.example.com
  marketplace_key_file: /run/secrets/market
  projects: [nginx, torvalds/linux]
  outdated:
    projects:
      agent: {project: nginxinc/nginx-amplify-agent, line: major}
`,
    { env: { PROD_KEY: 'prod-secret-1' }, readFile: () => 'market-secret-3\n' },
  );

  it('names what was configured and where the keys come from', () => {
    expect(summarizeConfig(config, 'monapi.yaml')).toBe(
      [
        'configuration monapi.yaml is valid',
        'exporter: metric prefix monapi_, sample timestamps off, null points: skip',
        'accounts: 1',
        '  prod: https://mon.example.com/api/v2, key from env PROD_KEY (bearer), 120/min burst 30 headroom 10%, concurrency 4',
        `    sources: hosts, host_details, series, components, alerts, alert_rules, account, api_description; metrics: 5 selected (catalogue has ${METRIC_CATALOGUE.length}); series every 1m, ingest delay 3m`,
        'releases: marketplace mode (https://releases.p.example.com, key from file /run/secrets/market), schedule "17 */2 * * *" UTC, runs at least 2h apart, 2 projects',
        '  outdated check: nginx nginx/nginx, php-fpm php/php-src, mysql mysql/mysql-server, mariadb MariaDB/server, varnish varnishcache/varnish-cache, agent nginxinc/nginx-amplify-agent (major); line minor',
      ].join('\n'),
    );
  });

  it('says when the outdated check is off', () => {
    const off = parseConfig(
      'accounts:\n  - {name: prod, base_url: https://mon.example.com/api/v2, api_key_env: PROD_KEY}\nreleases:\n  free_base_url: https://free.example.com\n  projects: [a/b]\n  outdated: {enabled: false}\n',
      { env: { PROD_KEY: 'k' } },
    );
    expect(summarizeConfig(off, 'monapi.yaml').split('\n').at(-1)).toBe('  outdated check: off');
  });

  it('shows no key', () => {
    const text = summarizeConfig(config, 'monapi.yaml');
    expect(text).not.toContain('prod-secret-1');
    expect(text).not.toContain('market-secret-3');
  });
});
