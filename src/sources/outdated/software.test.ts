import { describe, expect, it } from 'vitest';
import { readInstalledVersion, resolveSoftwareRules, softwareOf, versionLine, type LinePolicy } from './software.js';

describe('softwareOf', () => {
  it.each([
    [{ type: 'nginx' }, 'nginx'],
    [{ type: 'phpfpm' }, 'php-fpm'],
    [{ type: 'phpfpm_pool', name: 'www' }, 'php-fpm'],
    [{ type: 'php-fpm' }, 'php-fpm'],
    [{ type: 'mysql', version: '8.0.40' }, 'mysql'],
    [{ type: 'mysql', version: '11.4.4-MariaDB' }, 'mariadb'],
    [{ type: 'mysql', display_name: 'mariadb @ db-1' }, 'mariadb'],
    [{ type: 'mariadb' }, 'mariadb'],
    [{ type: 'Varnish' }, 'varnish'],
    [{ type: 'varnishd' }, 'varnish'],
    [{ type: ' redis ' }, 'redis'],
    [{ type: '' }, undefined],
    // Without a type (a list grouped by category gives none), a name that starts with known software says it.
    [{ name: 'nginx' }, 'nginx'],
    [{ display_name: 'phpfpm www @ web-1' }, 'php-fpm'],
    [{ display_name: 'mysql @ db-1', version: '10.11.6-MariaDB' }, 'mariadb'],
    [{ name: 'www' }, undefined],
    [{ display_name: 'agent @ web-1' }, undefined],
  ])('%j is %s', (component, want) => {
    expect(softwareOf(component)).toBe(want);
  });
});

describe('readInstalledVersion and versionLine', () => {
  it.each<[string | undefined, string | undefined, Record<LinePolicy, string | undefined> | undefined]>([
    ['1.26.2', '1.26.2', { minor: '1.26', major: '1', latest: undefined }],
    ['nginx/1.27.3', '1.27.3', { minor: '1.27', major: '1', latest: undefined }],
    ['v1.8.11-1', '1.8.11-1', { minor: '1.8', major: '1', latest: undefined }],
    ['11.4.4-MariaDB', '11.4.4-MariaDB', { minor: '11.4', major: '11', latest: undefined }],
    // MariaDB's version as old MySQL clients are told it.
    ['5.5.5-10.11.6-MariaDB-0+deb12u1', '10.11.6-MariaDB-0+deb12u1', { minor: '10.11', major: '10', latest: undefined }],
    // A dpkg epoch.
    ['1:10.11.6', '10.11.6', { minor: '10.11', major: '10', latest: undefined }],
    ['8.0.39-0ubuntu0.22.04.1', '8.0.39-0ubuntu0.22.04.1', { minor: '8.0', major: '8', latest: undefined }],
    ['8.4.0RC4', '8.4.0RC4', { minor: '8.4', major: '8', latest: undefined }],
    ['7', '7', { minor: '7', major: '7', latest: undefined }],
    ['  6.0.13 (revision abc)', '6.0.13', { minor: '6.0', major: '6', latest: undefined }],
    ['unknown', undefined, undefined],
    ['', undefined, undefined],
    [undefined, undefined, undefined],
  ])('%j reads as %j', (raw, normalised, lines) => {
    const parsed = readInstalledVersion(raw);
    expect(parsed?.normalised).toBe(normalised);
    if (parsed === undefined || lines === undefined) {
      expect(parsed).toBe(lines);
      return;
    }
    expect({ minor: versionLine(parsed, 'minor'), major: versionLine(parsed, 'major'), latest: versionLine(parsed, 'latest') }).toEqual(lines);
  });
});

describe('resolveSoftwareRules', () => {
  it('keeps the defaults with the default line when nothing is configured', () => {
    const rules = resolveSoftwareRules({}, 'minor');
    expect(Object.fromEntries(rules)).toEqual({
      nginx: { project: 'nginx/nginx', line: 'minor' },
      'php-fpm': { project: 'php/php-src', line: 'minor' },
      mysql: { project: 'mysql/mysql-server', line: 'minor' },
      mariadb: { project: 'MariaDB/server', line: 'minor' },
      varnish: { project: 'varnishcache/varnish-cache', line: 'minor' },
      agent: { project: 'nginxinc/nginx-amplify-agent', line: 'minor' },
    });
  });

  it('overrides, turns off and extends entries', () => {
    const rules = resolveSoftwareRules({ nginx: { project: 'nginx/nginx', line: 'latest' }, mysql: false, agent: { project: 'acme/agent' }, redis: { project: 'redis/redis' } }, 'major');
    expect(rules.get('nginx')).toEqual({ project: 'nginx/nginx', line: 'latest' });
    expect(rules.has('mysql')).toBe(false);
    expect(rules.get('agent')).toEqual({ project: 'acme/agent', line: 'major' });
    expect(rules.get('redis')).toEqual({ project: 'redis/redis', line: 'major' });
    expect(rules.get('varnish')).toEqual({ project: 'varnishcache/varnish-cache', line: 'major' });
  });
});
