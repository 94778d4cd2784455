import { z } from 'zod';
import {
  SimAccountBody as Account,
  SimAlertRuleList as AlertRuleList,
  SimComponentList as ComponentList,
  SimErrorBody as ErrorBody,
  SimHost as Host,
  SimHostList as HostList,
  SimLatestValue as LatestValue,
  SimMetricCatalogue as MetricCatalogue,
  SimRecentAlerts as RecentAlerts,
  SimSeriesResponse as SeriesResponse,
  SimWebsiteCheckList as WebsiteCheckList,
  SimWebsiteList as WebsiteList,
  SimWebsiteSummary as WebsiteSummary,
} from './monitoring/schemas.js';
import {
  AltAccountBody,
  AltAlertRuleList,
  AltComponentList,
  AltLatestValue,
  AltMetricCatalogue,
  AltWebsiteCheck,
  AltWebsiteCheckList,
  AltWebsiteList,
  AltWebsiteSummary,
} from './shapes/alt-schemas.js';
import {
  NestedAccountBody,
  NestedAlertRuleList,
  NestedComponentList,
  NestedLatestValue,
  NestedMetricCatalogue,
  NestedWebsiteCheck,
  NestedWebsiteCheckList,
  NestedWebsiteList,
  NestedWebsiteSummary,
} from './shapes/nested-schemas.js';
import { STANDARD_SHAPES, SHAPE_ENDPOINTS, type ShapeEndpoint, type ShapeSource } from './shapes/shapes.js';
import { JSONAPI_MEDIA_TYPE } from './layouts/bodies.js';
import { LAYOUT_OFF, MAX_PAGE_SIZE, PAGED_LIST_PATHS, type LayoutSettings, type LayoutSource } from './layouts/layout.js';
import { EnvelopeList, EnvelopeObject, HalList, HalResource, JsonApiDocument, JsonApiList } from './layouts/schemas.js';

/**
 * The OpenAPI 3.1 description the simulator serves at `/api/v2/openapi.json`. Response
 * schemas come from the simulator's own zod schemas (`monitoring/schemas.ts`), which type
 * its answers; the parameter rules mirror `monitoring/http/params.ts`. The response schema of
 * each endpoint follows the shape set it answers with now (standard, alternative or nested).
 */

export interface OpenApiOptions {
  rateLimitPerMinute?: number;
  burst?: number;
  shapes?: ShapeSource;
  /** With a layout on, the lists and single resources it wraps have its envelope, and the paged lists take `page`, `per_page`, `cursor`. */
  layout?: LayoutSource;
}

type Json = Record<string, unknown>;

const RESPONSE_SCHEMAS = {
  Account,
  HostList,
  Host,
  MetricCatalogue,
  SeriesResponse,
  LatestValue,
  ComponentList,
  AlertRuleList,
  RecentAlerts,
  WebsiteList,
  WebsiteSummary,
  WebsiteCheckList,
  ErrorBody,
  PlanRequiredError: ErrorBody.extend({ upgrade_url: z.string() }),
  AltAccount: AltAccountBody,
  AltMetricCatalogue,
  AltLatestValue,
  AltComponentList,
  AltAlertRuleList,
  AltWebsiteList,
  AltWebsiteSummary,
  AltWebsiteCheckList,
  WebsiteSummaryWithAltChecks: WebsiteSummary.extend({ recent_checks: z.array(AltWebsiteCheck).optional() }),
  NestedAccount: NestedAccountBody,
  NestedMetricCatalogue,
  NestedLatestValue,
  NestedComponentList,
  NestedAlertRuleList,
  NestedWebsiteList,
  NestedWebsiteSummary,
  NestedWebsiteCheckList,
  WebsiteSummaryWithNestedChecks: WebsiteSummary.extend({ recent_checks: z.array(NestedWebsiteCheck).optional() }),
} as const;

type SchemaName = keyof typeof RESPONSE_SCHEMAS;

/** Added to the document only while a layout is on, so that with none it stays what it was. */
const LAYOUT_SCHEMAS = { HalList, HalResource, JsonApiList, JsonApiDocument, EnvelopeList, EnvelopeObject } as const;
type LayoutSchemaName = keyof typeof LAYOUT_SCHEMAS;

const PAGED_PATHS: ReadonlySet<string> = new Set(Object.values(PAGED_LIST_PATHS));
const SINGLE_PATHS: ReadonlySet<string> = new Set(['/account', '/websites/{id}', '/hosts/{uuid}']);
const LIST_SCHEMA: Readonly<Record<Exclude<LayoutSettings['envelope'], 'none'>, { list: LayoutSchemaName; single: LayoutSchemaName }>> = {
  hal: { list: 'HalList', single: 'HalResource' },
  jsonapi: { list: 'JsonApiList', single: 'JsonApiDocument' },
  envelope: { list: 'EnvelopeList', single: 'EnvelopeObject' },
};

const PAGE_PARAMETERS: Record<string, Json> = {
  Page: {
    name: 'page',
    in: 'query',
    required: false,
    description: 'Page number, from 1 (layout paged). Beyond the last page, or given with cursor: 400.',
    schema: { type: 'integer', minimum: 1 },
  },
  PerPage: {
    name: 'per_page',
    in: 'query',
    required: false,
    description: `Items per page (layout paged); default the configured page size.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'Opaque cursor from a next link, Link header or next_cursor (layout paged). One the API did not give out: 400.',
    schema: { type: 'string' },
  },
};

/** The schema of an endpoint's 200 answer in the alternative and nested sets, by the shape endpoint it follows. */
const OTHER_SCHEMAS: Readonly<Partial<Record<string, { endpoint: ShapeEndpoint; alt: SchemaName; nested: SchemaName }>>> = {
  '/account': { endpoint: 'account', alt: 'AltAccount', nested: 'NestedAccount' },
  '/hosts/{uuid}/metrics': { endpoint: 'metrics', alt: 'AltMetricCatalogue', nested: 'NestedMetricCatalogue' },
  '/hosts/{uuid}/metrics/{name}/latest': { endpoint: 'latest', alt: 'AltLatestValue', nested: 'NestedLatestValue' },
  '/hosts/{uuid}/components': { endpoint: 'components', alt: 'AltComponentList', nested: 'NestedComponentList' },
  '/alerts': { endpoint: 'alert-rules', alt: 'AltAlertRuleList', nested: 'NestedAlertRuleList' },
  '/websites': { endpoint: 'websites', alt: 'AltWebsiteList', nested: 'NestedWebsiteList' },
  '/websites/{id}': { endpoint: 'website', alt: 'AltWebsiteSummary', nested: 'NestedWebsiteSummary' },
  '/websites/{id}/checks': { endpoint: 'checks', alt: 'AltWebsiteCheckList', nested: 'NestedWebsiteCheckList' },
};

function responseSchema(path: string, op: Operation, shapes: ShapeSource): SchemaName {
  const other = OTHER_SCHEMAS[path];
  const set = other ? shapes.of(other.endpoint) : 'standard';
  if (other && set !== 'standard') return other[set];
  if (path === '/websites/{id}' && shapes.of('checks') === 'alt') return 'WebsiteSummaryWithAltChecks';
  if (path === '/websites/{id}' && shapes.of('checks') === 'nested') return 'WebsiteSummaryWithNestedChecks';
  return op.schema;
}

function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema) as Json;
  return rest;
}

const ref = (name: SchemaName): Json => ({ $ref: `#/components/schemas/${name}` });
const errorRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

const WINDOW_PATTERN = '^[1-9][0-9]*[mhdw]$';

const PARAMETERS: Record<string, Json> = {
  HostUuid: {
    name: 'uuid',
    in: 'path',
    required: true,
    description: 'Host identifier (32 hex characters). A host of another account is 404.',
    schema: { type: 'string' },
  },
  WebsiteId: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'Website identifier, an integer; anything else is 400 bad_request. A website of another account is 404.',
    schema: { type: 'integer' },
  },
  MetricName: {
    name: 'name',
    in: 'path',
    required: true,
    description: 'A metric name listed by /hosts/{uuid}/metrics; any other name is 404.',
    schema: { type: 'string' },
  },
  SeriesNames: {
    name: 'names',
    in: 'query',
    required: true,
    description:
      'Comma-separated metric names, each listed by /hosts/{uuid}/metrics. Missing, empty, an empty element or an unknown name is 400. A repeated name is answered once.',
    schema: { type: 'string', minLength: 1 },
  },
  SeriesSince: {
    name: 'since',
    in: 'query',
    required: false,
    description:
      'Relative window: an integer N >= 1 followed by m, h, d or w. Windows longer than the plan retention (30 d Pro, 90 d Business) are clamped. The sampling interval is 60 s up to 4 h, 120 s up to 1 d, 300 s up to 2 d, 900 s up to 1 w, 3600 s beyond.',
    schema: { type: 'string', pattern: WINDOW_PATTERN, default: '1h' },
  },
  RecentLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Maximum number of events, newest first. A positive integer; values above 500 are treated as 500.',
    schema: { type: 'integer', minimum: 1, default: 50 },
  },
  ChecksSince: {
    name: 'since',
    in: 'query',
    required: false,
    description:
      'Relative window (N >= 1 followed by m, h, d or w), clamped to retention. With since: the checks inside the window, oldest first, at most `limit` (default 500) of the oldest. Without: the newest `limit` (default 100), newest first.',
    schema: { type: 'string', pattern: WINDOW_PATTERN },
  },
  ChecksLimit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Maximum number of checks, a positive integer of at most 500. Default 100 without since, 500 with since.',
    schema: { type: 'integer', minimum: 1, maximum: 500 },
  },
};

interface Operation {
  summary: string;
  schema: keyof typeof RESPONSE_SCHEMAS;
  parameters: string[];
  /** Whether the route can answer 400 (it takes parameters with rules). */
  badRequest: boolean;
  /** Whether the route names a resource that may not exist. */
  notFound: boolean;
}

const OPERATIONS: Record<string, Operation> = {
  '/account': { summary: 'Plan, limits, usage and rate limit of the account', schema: 'Account', parameters: [], badRequest: false, notFound: false },
  '/hosts': { summary: 'Every host of the account', schema: 'HostList', parameters: [], badRequest: false, notFound: false },
  '/hosts/{uuid}': { summary: 'One host', schema: 'Host', parameters: ['HostUuid'], badRequest: false, notFound: true },
  '/hosts/{uuid}/metrics': {
    summary: 'Available metric names, grouped by component',
    schema: 'MetricCatalogue',
    parameters: ['HostUuid'],
    badRequest: false,
    notFound: true,
  },
  '/hosts/{uuid}/metrics/series': {
    summary: 'Metric series of one host',
    schema: 'SeriesResponse',
    parameters: ['HostUuid', 'SeriesNames', 'SeriesSince'],
    badRequest: true,
    notFound: true,
  },
  '/hosts/{uuid}/metrics/{name}/latest': {
    summary: 'Latest value of one metric',
    schema: 'LatestValue',
    parameters: ['HostUuid', 'MetricName'],
    badRequest: false,
    notFound: true,
  },
  '/hosts/{uuid}/components': {
    summary: 'Detected web-server, application-server, database and cache instances',
    schema: 'ComponentList',
    parameters: ['HostUuid'],
    badRequest: false,
    notFound: true,
  },
  '/alerts': { summary: 'Alert rules', schema: 'AlertRuleList', parameters: [], badRequest: false, notFound: false },
  '/alerts/recent': { summary: 'Recent alert events, newest first', schema: 'RecentAlerts', parameters: ['RecentLimit'], badRequest: true, notFound: false },
  '/websites': { summary: 'Monitored websites with 24-hour aggregates', schema: 'WebsiteList', parameters: [], badRequest: false, notFound: false },
  '/websites/{id}': { summary: 'Website summary', schema: 'WebsiteSummary', parameters: ['WebsiteId'], badRequest: true, notFound: true },
  '/websites/{id}/checks': {
    summary: 'Check history of one website',
    schema: 'WebsiteCheckList',
    parameters: ['WebsiteId', 'ChecksSince', 'ChecksLimit'],
    badRequest: true,
    notFound: true,
  },
};

function operationId(path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/[{}]/g, '').replace(/^./, (c) => c.toUpperCase()));
  return `get${words.join('')}`;
}

function buildOperation(path: string, op: Operation, shapes: ShapeSource, layout: LayoutSettings): Json {
  const paged = layout.paged && PAGED_PATHS.has(path);
  const wrapped = layout.envelope === 'none' ? undefined : PAGED_PATHS.has(path) ? LIST_SCHEMA[layout.envelope].list : SINGLE_PATHS.has(path) ? LIST_SCHEMA[layout.envelope].single : undefined;
  const mediaType = wrapped && layout.envelope === 'jsonapi' ? JSONAPI_MEDIA_TYPE : 'application/json';
  const responses: Json = {
    '200': { description: op.summary, content: { [mediaType]: { schema: wrapped ? { $ref: `#/components/schemas/${wrapped}` } : ref(responseSchema(path, op, shapes)) } } },
  };
  if (op.badRequest || paged) responses['400'] = errorRef('BadRequest');
  responses['401'] = errorRef('Unauthorized');
  responses['403'] = errorRef('PlanRequired');
  if (op.notFound) responses['404'] = errorRef('NotFound');
  responses['429'] = errorRef('RateLimited');
  return {
    get: {
      operationId: operationId(path),
      summary: op.summary,
      parameters: [...op.parameters, ...(paged ? Object.keys(PAGE_PARAMETERS) : [])].map((name) => ({ $ref: `#/components/parameters/${name}` })),
      responses,
    },
  };
}

function errorResponse(description: string, schema: keyof typeof RESPONSE_SCHEMAS = 'ErrorBody', headers?: Json): Json {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: ref(schema) } } };
}

let cached: { key: string; doc: Json } | undefined;

export function buildMonitoringOpenApi(options: OpenApiOptions = {}): Json {
  const perMinute = options.rateLimitPerMinute ?? 120;
  const burst = options.burst ?? 30;
  const shapes = options.shapes ?? { of: () => STANDARD_SHAPES.default };
  const layout = options.layout?.settings() ?? LAYOUT_OFF;
  const layoutOn = layout.envelope !== 'none' || layout.paged;
  const key = `${perMinute}/${burst}/${SHAPE_ENDPOINTS.map((e) => shapes.of(e)).join(',')}/${layout.envelope}/${layout.paged}`;
  if (cached?.key === key) return cached.doc;

  const paths: Json = Object.fromEntries(Object.entries(OPERATIONS).map(([path, op]) => [path, buildOperation(path, op, shapes, layout)]));
  paths['/openapi.json'] = {
    get: {
      operationId: 'getOpenapiJson',
      summary: 'This OpenAPI description. Public: no API key needed, not rate limited.',
      security: [],
      responses: {
        '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  };

  const doc: Json = {
    openapi: '3.1.0',
    info: {
      title: 'Monitoring REST API (simulator)',
      version: '2',
      description: `Read-only monitoring API: hosts, metric series, alert rules and events, website checks. Every endpoint is GET (any other method is 404 not_found); responses are application/json with snake_case keys and RFC 3339 UTC timestamps. Access requires the Pro plan or higher. Rate limit: ${perMinute} requests per minute per API key, burst ${burst}.`,
    },
    servers: [{ url: '/api/v2' }],
    security: [{ bearerAuth: [] }, { apiKeyAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        apiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'X-Api-Key: <API key>, equivalent to the bearer form' },
      },
      parameters: layoutOn ? { ...PARAMETERS, ...PAGE_PARAMETERS } : PARAMETERS,
      schemas: Object.fromEntries(
        Object.entries({ ...RESPONSE_SCHEMAS, ...(layoutOn ? LAYOUT_SCHEMAS : {}) }).map(([name, schema]) => [name, jsonSchema(schema as z.ZodType)]),
      ),
      responses: {
        BadRequest: errorResponse('bad_request: a missing or invalid parameter; the message names it'),
        Unauthorized: errorResponse('unauthorized: missing or invalid API key'),
        PlanRequired: errorResponse('plan_required: API access requires Pro or higher; the body carries upgrade_url', 'PlanRequiredError'),
        NotFound: errorResponse('not_found: the resource does not exist or belongs to another account'),
        RateLimited: errorResponse(`rate_limited: more than ${perMinute} requests per minute per API key (burst ${burst})`, 'ErrorBody', {
          'Retry-After': { description: 'Whole seconds until a request will be accepted', schema: { type: 'integer', minimum: 1 } },
        }),
      },
    },
  };
  cached = { key, doc };
  return doc;
}
