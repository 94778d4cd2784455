import { createHash } from 'node:crypto';
import type { SimComponent } from '../schemas.js';
import { hash4, pick, unit } from './hash.js';
import type { HostProfile } from './hosts.js';

/**
 * The server software the agent detects on a host, with what the agent reports about each
 * (upstream facts): a type, a local id (sha256 hex), a display name such as
 * `phpfpm www @ web-1`, version and pid, and per-type details (nginx: commercial build,
 * configure arguments, ssl library, paths; php-fpm master and pools, mysql, varnish:
 * command line and paths; a pool: its listen address and status path).
 *
 * The standard shape set sends a summary of each (`componentBody`); the alternative one
 * sends the agent's own fields (shapes/monitoring-alt.ts).
 */

export type ServerKind = SimComponent['kind'];
/** The agent's object types. MariaDB is watched by the mysql collector, so it is `mysql` too. */
export type AgentObjectType = 'nginx' | 'phpfpm' | 'phpfpm_pool' | 'mysql' | 'varnish';

export interface ComponentRecord {
  readonly localId: string;
  readonly kind: ServerKind;
  readonly software: 'nginx' | 'php-fpm' | 'mysql' | 'mariadb' | 'varnish';
  readonly type: AgentObjectType;
  /** `nginx`, `phpfpm`, `phpfpm www`, `mysql`, `mariadb`, `varnish`. */
  readonly name: string;
  /** `<name> @ <hostname>` */
  readonly displayName: string;
  /** The release, `1.27.3`. */
  readonly version: string;
  /** The version as the software itself prints it (`11.4.4-MariaDB`). */
  readonly reportedVersion: string;
  readonly pid: number;
  /** Per-type details, snake_case, as the agent sends them. */
  readonly details: Readonly<Record<string, unknown>>;
}

const NGINX_VERSIONS = ['1.26.1', '1.26.2', '1.27.2', '1.27.3'] as const;
const PHP_VERSIONS = ['8.2.25', '8.2.26', '8.3.13', '8.3.14'] as const;
const MYSQL_VERSIONS = ['8.0.39', '8.0.40', '8.4.2', '8.4.3'] as const;
const MARIADB_VERSIONS = ['10.11.9', '10.11.10', '11.4.4'] as const;
const VARNISH_VERSIONS = ['7.5.0', '7.6.0', '7.6.1'] as const;
const OPENSSL_VERSIONS = ['3.0.13', '3.0.15', '3.2.2'] as const;
const NGINX_PLUS_RELEASES = ['nginx-plus-r32', 'nginx-plus-r33'] as const;
const NGINX_CONFIGURE = [
  '--prefix=/etc/nginx',
  '--sbin-path=/usr/sbin/nginx',
  '--conf-path=/etc/nginx/nginx.conf',
  '--with-http_ssl_module',
  '--with-http_v2_module',
  '--with-http_stub_status_module',
  '--with-stream',
].join(' ');

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function componentRecords(profile: HostProfile, seed: number): ComponentRecord[] {
  const h = (salt: number): number => hash4(seed, profile.key, 0xc0, salt);
  const pid = (salt: number): number => 300 + (h(salt) % 60_000);
  const record = (
    kind: ServerKind,
    software: ComponentRecord['software'],
    type: AgentObjectType,
    name: string,
    version: string,
    salt: number,
    details: Record<string, unknown>,
    reportedVersion = version,
  ): ComponentRecord => ({
    localId: sha256(`${profile.uuid}:${kind}:${name}`),
    kind,
    software,
    type,
    name,
    displayName: `${name} @ ${profile.hostname}`,
    version,
    reportedVersion,
    pid: pid(salt),
    details,
  });

  const out: ComponentRecord[] = [];
  for (const kind of profile.serverKinds) {
    if (kind === 'web-server') {
      const version = pick(h(1), NGINX_VERSIONS);
      const openssl = pick(h(20), OPENSSL_VERSIONS);
      const plus = unit(h(21)) < 0.15;
      out.push(
        record(kind, 'nginx', 'nginx', 'nginx', version, 2, {
          plus: { enabled: plus, release: plus ? pick(h(22), NGINX_PLUS_RELEASES) : null },
          configure: NGINX_CONFIGURE,
          ssl: { built: ['openssl', openssl], run: ['openssl', openssl] },
          path: { bin: '/usr/sbin/nginx', conf: '/etc/nginx/nginx.conf' },
          built_from_source: false,
          running: true,
        }),
      );
    }
    if (kind === 'application-server') {
      const version = pick(h(3), PHP_VERSIONS);
      const line = version.split('.').slice(0, 2).join('.');
      const conf = `/etc/php/${line}/fpm/php-fpm.conf`;
      const master = record(kind, 'php-fpm', 'phpfpm', 'phpfpm', version, 4, {
        cmd: `php-fpm: master process (${conf})`,
        bin_path: `/usr/sbin/php-fpm${line}`,
        conf_path: conf,
      });
      out.push(master);
      const socket = unit(h(23)) < 0.7;
      out.push(
        record(kind, 'php-fpm', 'phpfpm_pool', 'phpfpm www', version, 5, {
          name: 'www',
          parent_local_id: master.localId,
          listen: socket ? `/run/php/php${line}-fpm.sock` : '127.0.0.1:9000',
          status_path: '/status',
        }),
      );
    }
    if (kind === 'database') {
      const mariadb = profile.database === 'mariadb';
      const version = pick(h(6), mariadb ? MARIADB_VERSIONS : MYSQL_VERSIONS);
      const daemon = mariadb ? '/usr/sbin/mariadbd' : '/usr/sbin/mysqld';
      out.push(
        record(
          kind,
          profile.database,
          'mysql',
          profile.database,
          version,
          7,
          { cmd: daemon, bin_path: daemon, conf_path: '/etc/mysql/my.cnf' },
          mariadb ? `${version}-MariaDB` : version,
        ),
      );
    }
    if (kind === 'cache') {
      out.push(
        record(kind, 'varnish', 'varnish', 'varnish', pick(h(8), VARNISH_VERSIONS), 9, {
          cmd: '/usr/sbin/varnishd -a :6081 -f /etc/varnish/default.vcl -s malloc,256m',
          bin_path: '/usr/sbin/varnishd',
          conf_path: '/etc/varnish/default.vcl',
        }),
      );
    }
  }
  return out;
}

/** The standard shape of a component: what it is, with the host it runs on. */
export function componentBody(record: ComponentRecord, hostUuid: string): SimComponent {
  return {
    id: record.localId,
    kind: record.kind,
    software: record.software,
    name: record.displayName,
    version: record.version,
    pid: record.pid,
    host_uuid: hostUuid,
  };
}
