import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/exporter/config.js';
import { endpointFromConfig } from '../../src/remote-write/endpoint.js';
import { decodeWriteRequest, encodeWriteRequest } from '../../src/remote-write/protocol.js';
import { HttpWriteSender } from '../../src/remote-write/sender.js';
import { makeTestPki, type TestPki } from '../support/tls.js';

/**
 * The remote_write section's authorization, headers and TLS settings on the wire: an HTTPS
 * receiver that wants a client certificate from the test CA sees the protocol's headers, the
 * configured ones and the credentials; a receiver the configured CA does not vouch for is not
 * sent anything.
 */

let pki: TestPki;
let server: Server;
let url: string;
const seen: { headers: Record<string, string | string[] | undefined>; clientCertSubject: string | string[] | undefined; body: Buffer }[] = [];

beforeAll(async () => {
  pki = makeTestPki();
  server = createServer({ cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = req.socket as TLSSocket;
      seen.push({ headers: req.headers, clientCertSubject: socket.getPeerCertificate().subject?.CN, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/push`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  pki?.remove();
});

function section(extra: string) {
  const config = parseConfig(
    `accounts:\n  - name: a\n    base_url: http://monitoring.test/api/v2\n    api_key_env: KEY\nremote_write:\n  url: ${url}\n  headers: { X-Scope-OrgID: team-a }\n${extra}`,
    { env: { KEY: 'account-key-1', RW_PASSWORD: 'rw-secret-2', RW_TOKEN: 'rw-token-3' } },
  );
  if (config.remoteWrite === undefined) throw new Error('no remote_write section');
  return config.remoteWrite;
}

const BODY = encodeWriteRequest([{ labels: { __name__: 'x', a: '1' }, samples: [{ value: 1, timestampMs: 1_795_000_000_000 }] }]);

describe('remote write authorization, headers and TLS', () => {
  it('sends basic auth, the headers and a client certificate to a receiver the configured CA vouches for', async () => {
    const tls = `  tls_config: { ca_file: ${pki.caCertFile}, cert_file: ${pki.clientCertFile}, key_file: ${pki.clientKeyFile} }\n`;
    const sender = new HttpWriteSender(endpointFromConfig(section(`  basic_auth: { username: monapi, password_env: RW_PASSWORD }\n${tls}`), {}));
    const outcome = await sender.send(BODY, new AbortController().signal);
    await sender.close();
    expect(outcome).toEqual({ kind: 'ok', status: 204 });
    const request = seen.at(-1);
    expect(request?.headers).toMatchObject({
      authorization: `Basic ${Buffer.from('monapi:rw-secret-2').toString('base64')}`,
      'x-scope-orgid': 'team-a',
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
    });
    expect(request?.clientCertSubject).toBeTruthy();
    expect(decodeWriteRequest(request?.body ?? Buffer.alloc(0))).toEqual([{ labels: { __name__: 'x', a: '1' }, samples: [{ value: 1, timestampMs: 1_795_000_000_000 }] }]);

    const bearer = new HttpWriteSender(endpointFromConfig(section(`  authorization: { credentials_env: RW_TOKEN }\n${tls}`), {}));
    expect(await bearer.send(BODY, new AbortController().signal)).toEqual({ kind: 'ok', status: 204 });
    await bearer.close();
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer rw-token-3');
  });

  it('sends nothing to a receiver the CA does not vouch for, and says why without the credentials', async () => {
    const before = seen.length;
    const sender = new HttpWriteSender(endpointFromConfig(section('  basic_auth: { username: monapi, password_env: RW_PASSWORD }\n'), {}));
    const outcome = await sender.send(BODY, new AbortController().signal);
    await sender.close();
    expect(outcome.kind).toBe('retry');
    expect(outcome.kind === 'retry' && outcome.reason).toMatch(/certificate/i);
    expect(JSON.stringify(outcome)).not.toContain('rw-secret-2');
    expect(seen.length).toBe(before);
  });
});
