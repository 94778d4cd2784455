import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/lib/clock.js';
import { buildMonitoringOpenApi } from '../../simulator/openapi.js';
import { createMonitoringApi } from '../../simulator/monitoring/server.js';
import { createWorld } from '../../simulator/monitoring/world.js';
import { TokenBucketLimiter } from '../../simulator/rate-limit.js';

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: { $ref: string }[]; responses: Record<string, unknown>; security?: unknown[] }>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>; parameters: Record<string, { name: string; schema: Record<string, unknown> }> };
}

/** Route paths as the express router really holds them, in OpenAPI template form. */
function servedRoutes(): string[] {
  const clock = new FakeClock();
  const router = createMonitoringApi({
    world: createWorld({ seed: 'openapi', hosts: 2, websites: 1 }),
    clock,
    limiter: new TokenBucketLimiter({ clock, perMinute: 120, burst: 30 }),
  });
  const stack = (router as unknown as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] }).stack;
  return stack.filter((layer) => layer.route).map((layer) => layer.route!.path.replace(/:([a-z]+)/g, '{$1}'));
}

describe('§1 and §9 the OpenAPI description', () => {
  const doc = buildMonitoringOpenApi() as unknown as Doc;

  it('§1: is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('§1: every route the server serves appears in the document, and nothing else', () => {
    const routes = servedRoutes();
    expect(routes.length).toBe(13);
    expect(Object.keys(doc.paths).sort()).toEqual([...routes].sort());
    for (const path of routes) expect(Object.keys(doc.paths[path]!), path).toEqual(['get']);
  });

  it('§5: both security schemes are declared and required on every endpoint but openapi.json', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(doc.paths['/openapi.json']!.get!.security).toEqual([]);
  });

  it('§7: every endpoint documents 401, 403 and 429; 400 and 404 where they can happen; no code outside the seed\'s table', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const codes = Object.keys(item.get!.responses);
      for (const code of codes) expect(['200', '400', '401', '403', '404', '429'], `${path} ${code}`).toContain(code);
      if (path === '/openapi.json') continue;
      for (const code of ['200', '401', '403', '429']) expect(codes, path).toContain(code);
      if (path.includes('{')) expect(codes, path).toContain('404');
      if ((item.get!.parameters ?? []).some((p) => /Names|Since|Limit|WebsiteId/.test(p.$ref))) expect(codes, path).toContain('400');
    }
  });

  it('§4: parameter rules are in the document: window pattern, names required, checks limit 1-500', () => {
    const parameters = doc.components.parameters;
    expect(new RegExp(parameters.SeriesSince!.schema.pattern as string).test('1h')).toBe(true);
    expect(new RegExp(parameters.SeriesSince!.schema.pattern as string).test('1.5h')).toBe(false);
    expect(parameters.SeriesSince!.schema.default).toBe('1h');
    expect(parameters.ChecksLimit!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    expect(parameters.RecentLimit!.schema).toMatchObject({ type: 'integer', minimum: 1, default: 50 });
    expect(parameters.SeriesNames).toMatchObject({ required: true });
  });

  it('states the configured rate limit in its description', () => {
    const custom = buildMonitoringOpenApi({ rateLimitPerMinute: 90, burst: 10 }) as { info: { description: string } };
    expect(custom.info.description).toContain('90 requests per minute per API key, burst 10');
  });
});
