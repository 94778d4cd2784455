import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from './http/errors.js';
import { json, passThroughGate, startLocalServer, type LocalServer } from '../../test/support/test-server.js';
import { UndiciTransport } from './http/transport.js';
import { createUpstreamMetrics } from './metrics.js';
import { MonitoringClient } from './monitoring/client.js';
import { monitoringCalls } from '../../test/support/monitoring-calls.js';
import { ReleaseClient } from './releases/client.js';

const KEY = 'secret-key-123';

/**
 * Forces every error path with a server that echoes the key back in every place it can
 * (messages, upgrade URL, Retry-After, unparsable bodies, map keys) and checks that the key
 * reaches no error message, no cause, no log line and no metric.
 */
describe('API keys never leak', () => {
  let server: LocalServer;
  let transport: UndiciTransport;
  /** For the upstream that never answers: a timeout is what it must give. */
  let impatientTransport: UndiciTransport;
  const lines: string[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  const registry = new Registry();
  const metrics = createUpstreamMetrics(registry, { accountLabel: true });

  beforeAll(async () => {
    server = await startLocalServer((req, res) => {
      const echoed = req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-rapidapi-key'] ?? 'none';
      const said = { error: 'x', message: `you sent ${String(echoed)}` };
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const scenario = path.split('/').find((part) => part.startsWith('case-'))?.slice(5) ?? path.split('/').pop();
      switch (scenario) {
        case '400':
        case '401':
        case '404':
        case '500':
          return json(res, Number(scenario), said);
        case '403plan':
          return json(res, 403, { error: 'plan_required', message: said.message, upgrade_url: `https://x/upgrade?k=${String(echoed)}` });
        case '403':
          return json(res, 403, said);
        case '429':
          return json(res, 429, said, { 'retry-after': String(echoed) });
        case '302':
          res.writeHead(302, { location: `https://x/?k=${String(echoed)}` });
          return res.end(String(echoed));
        case 'notjson':
          res.writeHead(200, { 'content-type': 'text/html' });
          return res.end(`<html>${String(echoed)}</html>`);
        case 'badmap':
          return json(res, 200, { host_uuid: 'a', metrics: { [String(echoed)]: 'not a list' } });
        case 'badpoints':
          return json(res, 200, {
            host_uuid: 'a',
            since: '2026-11-22T12:00:00Z',
            interval: 60,
            series: { [String(echoed)]: [{ timestamp: 'x', value: 1 }, { timestamp: '2026-11-22T12:00:00Z', value: 1 }] },
          });
        case 'allbadpoints':
          return json(res, 200, { host_uuid: 'a', since: '2026-11-22T12:00:00Z', interval: 60, series: { [String(echoed)]: [{ timestamp: String(echoed), value: 1 }] } });
        case 'version':
          return json(res, 200, { version: [String(echoed)], [String(echoed)]: 1 });
        case 'textversion':
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end(`${String(echoed)}\n${String(echoed)}\n`);
        case 'big':
          return json(res, 200, { padding: 'x'.repeat(4096), said });
        case 'silent':
          return undefined;
        case 'drop':
          return req.socket.destroy();
        default:
          return json(res, 418, said);
      }
    });
    // Patient enough that a busy machine never turns an answer into a timeout.
    transport = new UndiciTransport({ headersTimeoutMs: 10_000, maxResponseBytes: 1024 });
    impatientTransport = new UndiciTransport({ headersTimeoutMs: 200, maxResponseBytes: 1024 });
  });

  afterAll(async () => {
    await transport.close();
    await impatientTransport.close();
    await server.close();
  });

  function monitoring(baseUrl = `${server.url}/api/v2`, authScheme: 'bearer' | 'x-api-key' = 'bearer', using = transport) {
    return monitoringCalls(new MonitoringClient({ baseUrl, apiKey: KEY, authScheme, transport: using, gate: passThroughGate, metrics, logger, account: 'a' }));
  }

  async function failure(promise: Promise<unknown>): Promise<Error> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }

  function expectNoKey(error: Error): void {
    // inspect shows the message, the stack, every own property and the whole cause chain.
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(KEY);
    let cause: unknown = error;
    while (cause instanceof Error) {
      expect(String(cause)).not.toContain(KEY);
      cause = cause.cause;
    }
  }

  it.each([
    ['400', 'bad_request'],
    ['401', 'unauthorized'],
    ['403plan', 'plan_required'],
    ['403', 'unauthorized'],
    ['404', 'not_found'],
    ['429', 'rate_limited'],
    ['500', 'server_error'],
    ['418', 'bad_request'],
    ['302', 'invalid_response'],
    ['notjson', 'invalid_response'],
    ['big', 'invalid_response'],
    ['silent', 'timeout'],
    ['drop', 'network'],
  ])('monitoring path %s (%s)', async (scenario, kind) => {
    for (const scheme of ['bearer', 'x-api-key'] as const) {
      const error = await failure(monitoring(`${server.url}/api/v2`, scheme, scenario === 'silent' ? impatientTransport : transport).host(`case-${scenario}`));
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).kind).toBe(kind);
      expectNoKey(error);
    }
  });

  it('a refused connection', async () => {
    const gone = await startLocalServer(() => undefined);
    await gone.close();
    const error = await failure(monitoring(`${gone.url}/api/v2`).account());
    expect((error as UpstreamError).kind).toBe('network');
    expectNoKey(error);
  });

  it('a wrong envelope whose map key echoes the key', async () => {
    const error = await failure(monitoring().metricCatalogue('case-badmap'));
    expect((error as UpstreamError).kind).toBe('invalid_response');
    expectNoKey(error);
  });

  it('dropped items whose path echoes the key', async () => {
    const result = await monitoring().series('case-badpoints', ['system.cpu.user']);
    expect(result.dropped).toHaveLength(1);
    expect(JSON.stringify(result.dropped)).not.toContain(KEY);
    expect(JSON.stringify(result.dropped)).toContain('[redacted]');
  });

  it('a response refused because none of its items could be read', async () => {
    const error = await failure(monitoring().series('case-allbadpoints', ['system.cpu.user']));
    expect((error as UpstreamError).kind).toBe('invalid_response');
    expectNoKey(error);
  });

  it.each([
    ['version', (c: ReleaseClient) => c.version({ id: 'case-version' })],
    ['textversion', (c: ReleaseClient) => c.version({ id: 'case-textversion' }, { text: true })],
    ['401', (c: ReleaseClient) => c.latest({ id: 'case-401' })],
    ['429', (c: ReleaseClient) => c.latest({ id: 'case-429' })],
    ['notjson', (c: ReleaseClient) => c.latest({ id: 'case-notjson' })],
  ])('marketplace path %s', async (scenario, call) => {
    const releases = new ReleaseClient({
      mode: 'marketplace',
      baseUrl: `${server.url}/market/case-${scenario}`,
      marketplaceKey: KEY,
      transport,
      gate: passThroughGate,
      metrics,
      logger,
    });
    const error = await failure(call(releases));
    expect(error).toBeInstanceOf(UpstreamError);
    expectNoKey(error);
  });

  it('no log line and no metric carries the key', async () => {
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) expect(line).not.toContain(KEY);
    const exposition = await registry.metrics();
    expect(exposition).toContain('monapi_upstream_requests_total');
    expect(exposition).not.toContain(KEY);
  });
});
