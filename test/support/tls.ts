import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Test support: a throw-away certificate authority made with the `openssl` command (Debian
 * package `openssl`; .ci/run installs it), with a server certificate for 127.0.0.1,
 * localhost and api.monitoring.test (a name only the test proxy resolves) and a client certificate, all signed by it. A missing openssl is an error,
 * never a skipped test.
 */
export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  readonly caCertFile: string;
  readonly serverCert: string;
  readonly serverCertFile: string;
  readonly serverKey: string;
  readonly serverKeyFile: string;
  readonly clientCert: string;
  readonly clientCertFile: string;
  readonly clientKey: string;
  readonly clientKeyFile: string;
  /** A certificate and key from another CA, which the test CA does not vouch for. */
  readonly strangerCert: string;
  readonly strangerKey: string;
  remove(): void;
}

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeTestPki(): TestPki {
  if (spawnSync('sh', ['-c', 'command -v openssl']).status !== 0) {
    throw new Error('openssl is not installed: install the Debian package "openssl" (apt-get install -y openssl); .ci/run does this');
  }
  const dir = mkdtempSync(join(tmpdir(), 'monapi-pki-'));
  const days = ['-days', '2'];
  const selfSigned = (name: string, subject: string) =>
    openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', subject, ...days], dir);
  selfSigned('ca', '/CN=monapi test CA');
  selfSigned('stranger', '/CN=stranger');
  const signed = (name: string, subject: string, extensions: string) => {
    openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-extfile', `${name}.ext`, ...days], dir);
  };
  signed('server', '/CN=localhost', 'subjectAltName=DNS:localhost,DNS:api.monitoring.test,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  signed('client', '/CN=prometheus', 'extendedKeyUsage=clientAuth\n');
  const file = (name: string) => join(dir, name);
  const read = (name: string) => readFileSync(file(name), 'utf8');
  return {
    dir,
    caCert: read('ca.crt'),
    caCertFile: file('ca.crt'),
    serverCert: read('server.crt'),
    serverCertFile: file('server.crt'),
    serverKey: read('server.key'),
    serverKeyFile: file('server.key'),
    clientCert: read('client.crt'),
    clientCertFile: file('client.crt'),
    clientKey: read('client.key'),
    clientKeyFile: file('client.key'),
    strangerCert: read('stranger.crt'),
    strangerKey: read('stranger.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
