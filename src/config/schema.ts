/**
 * The shape of the YAML file, in zod 4: types, ranges, formats and defaults of each field.
 * The keys every account and the releases section have are here; the `sources:` and
 * `cadence:` sections and each source's own keys are composed from the sources' specs
 * (`buildConfigSchema`). Rules that relate several fields (exactly one key source, unique
 * names, the release schedule against the free endpoint's cache) are checked afterwards in
 * `load.ts`. Every message says what is wrong in words an operator can act on;
 * `issueMessage` turns zod's generic issues into such words.
 */
import { z } from 'zod';
import { processRedactor } from '../lib/redact.js';
import { analyseCron } from './cron.js';
import { formatDuration, parseDuration } from './duration.js';
import { patternProblem, type PatternKind } from './patterns.js';
import { LIST_PATH_KEY, NEXT_PAGE_KEY, type ConfigSection, type SourceConfigSpec } from './source-spec.js';
import { DEFAULT_RELEASES_SCHEDULE } from './types.js';

export const ACCOUNT_KEY_HINT =
  'API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)';
export const MARKETPLACE_KEY_HINT =
  'API keys must not be written in the config file: set marketplace_key_env (the name of an environment variable holding the key) or marketplace_key_file (the path of a file holding the key)';

/** Keys that can only be a credential written inline: answered with the hint alone. */
const CREDENTIAL_KEY = /^(api|marketplace|access|auth|bearer)?[_-]?(key|token|secret|password|passwd|credentials?)$/i;
/** Other keys that may hold one (`bogus_key`, `my_token`): the usual answer, then the hint. */
const SECRET_LOOKING_KEY = /key|token|secret|passw|credential|bearer/i;

/** Carried on the issue an unknown key raises, so `load.ts` can word it with a suggestion. */
export interface UnknownKeyParams {
  readonly unknownKey: true;
  readonly known: readonly string[];
  /** The hint for a key that looks like it holds a credential. */
  readonly secretHint: string;
  /** Fixed messages for keys that must not be set at all. */
  readonly fixed: Readonly<Record<string, string>>;
}

// A catchall cannot see which key it runs for; load.ts reads it from the issue path.
function unknownKeyCatchall(known: readonly string[], secretHint: string, fixed: Readonly<Record<string, string>>) {
  const params: UnknownKeyParams = { unknownKey: true, known, secretHint, fixed };
  return z.unknown().check((ctx) => {
    ctx.issues.push({ code: 'custom', input: ctx.value, message: 'unknown key', params: { ...params } });
  });
}

export function isUnknownKeyParams(params: unknown): params is UnknownKeyParams {
  return typeof params === 'object' && params !== null && (params as { unknownKey?: unknown }).unknownKey === true;
}

/** The message for an unknown key: an inline secret, a fixed rule, or a typo with a suggestion. */
export function unknownKeyMessage(key: string, params: UnknownKeyParams, suggest: (key: string, known: readonly string[]) => string | undefined): string {
  const fixed = params.fixed[key];
  if (fixed !== undefined) return `${key} ${fixed}`;
  if (CREDENTIAL_KEY.test(key)) return `unknown key ${JSON.stringify(key)}: ${params.secretHint}`;
  const suggestion = suggest(key, params.known);
  const unknown = suggestion !== undefined ? `unknown key ${JSON.stringify(key)} (did you mean ${JSON.stringify(suggestion)}?)` : `unknown key ${JSON.stringify(key)} (allowed: ${params.known.join(', ')})`;
  return SECRET_LOOKING_KEY.test(key) ? `${unknown}; if it holds an API key: ${params.secretHint}` : unknown;
}

/** A mapping whose unknown keys are errors. */
export function strictObject<Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  options: { secretHint?: string; fixed?: Readonly<Record<string, string>> } = {},
) {
  return z.object(shape).catchall(unknownKeyCatchall(Object.keys(shape), options.secretHint ?? ACCOUNT_KEY_HINT, options.fixed ?? {}));
}

// Every field of a section has a default, which the generic Shape cannot show the compiler.
const EMPTY_SECTION = {} as never;

/** An optional mapping: absent or empty (`cadence:` with everything commented out) means all defaults. */
export function section<Shape extends z.core.$ZodLooseShape>(shape: Shape, options: { secretHint?: string; fixed?: Readonly<Record<string, string>> } = {}) {
  return z.preprocess((value) => (value === null ? undefined : value), strictObject(shape, options).prefault(EMPTY_SECTION));
}

export function list<Item extends z.ZodType>(item: Item, fallback: z.output<Item>[]) {
  return z.preprocess((value) => (value === null ? undefined : value), z.array(item).default(fallback));
}

export function globList(kind: PatternKind, fallback: string[]) {
  return list(
    z.string().superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern, kind);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    fallback,
  );
}

/** A duration string turned into milliseconds, with a default and bounds. */
export function duration(fallback: string, minMs: number, maxMs: number, tooShort = 'polling faster would spend the request budget') {
  return z
    .unknown()
    .optional()
    .transform((value, ctx): number => {
      const text = value === undefined ? fallback : value;
      if (typeof text !== 'string') {
        ctx.addIssue({
          code: 'custom',
          message:
            typeof text === 'number'
              ? `must be a duration with a unit, such as ${text}s or ${text}m (a bare number has no unit)`
              : `must be a duration such as 30s, 5m or 1h (got ${describeValue(text)})`,
        });
        return z.NEVER;
      }
      const parsed = parseDuration(text);
      if ('error' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      if (parsed.ms === 0 && minMs > 0) {
        ctx.addIssue({ code: 'custom', message: `must be greater than 0s (minimum ${formatDuration(minMs)})` });
        return z.NEVER;
      }
      if (parsed.ms < minMs) {
        ctx.addIssue({ code: 'custom', message: `must be at least ${formatDuration(minMs)} (got ${text}); ${tooShort}` });
        return z.NEVER;
      }
      if (parsed.ms > maxMs) {
        ctx.addIssue({ code: 'custom', message: `must be at most ${formatDuration(maxMs)} (got ${text})` });
        return z.NEVER;
      }
      return parsed.ms;
    });
}

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const CADENCE_MAX_MS = DAY;
export const COUNTER_GRACE = { default: '1h', minMs: 0, maxMs: DAY } as const;

export function httpUrl() {
  return z.string().superRefine((text, ctx) => {
    const problem = httpUrlProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

export function httpUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `must be an http or https URL such as https://monitoring.example.com/api/v2 (got ${describeValue(text)})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must use http or https (got ${url.protocol.slice(0, -1)})`;
  // Never echo the URL: it holds credentials.
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password; give the API key through api_key_env or api_key_file';
  if (url.search !== '' || url.hash !== '') return `must not have a query or fragment (got ${describeValue(text)})`;
  return undefined;
}

/** The Monitoring API's base address ends in its version prefix; another prefix is another API. */
function monitoringPathProblem(text: string): string | undefined {
  const path = new URL(text).pathname.replace(/\/+$/, '');
  if (path.endsWith('/api/v2')) return undefined;
  return `must end in /api/v2, the API version this exporter speaks, e.g. https://monitoring.example.com/api/v2 (got path ${JSON.stringify(path === '' ? '/' : path)})`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// The value is never echoed: an operator may have pasted the key itself here.
export const envVarName = z.string().superRefine((name, ctx) => {
  if (!ENV_NAME.test(name)) {
    ctx.addIssue({ code: 'custom', message: 'must be the name of an environment variable (letters, digits and _, not starting with a digit), not the key itself' });
  }
});

export const nonEmptyString = z.string().min(1);

const MIB = 1024 * 1024;

/** How one account (or the release lookups) talks HTTP to its upstream. */
export const HTTP_DEFAULTS = { timeout: '15s', deadline: '30s', maxResponseBytes: 8 * MIB } as const;
const httpSection = () =>
  section({
    // Time to the response headers, and the longest silence between two body chunks.
    timeout: duration(HTTP_DEFAULTS.timeout, SECOND, 5 * MINUTE, 'a shorter wait fails slow but healthy answers'),
    // The whole request: a body that drips a byte at a time cannot hold a request slot longer.
    deadline: duration(HTTP_DEFAULTS.deadline, SECOND, 10 * MINUTE, 'a shorter wait fails slow but healthy answers'),
    max_response_bytes: z.number().int().min(64 * 1024).max(256 * MIB).default(HTTP_DEFAULTS.maxResponseBytes),
    ca_file: nonEmptyString.optional(),
    insecure_skip_verify: z.boolean().default(false),
  });

/** Per-account bounds on what the account may add to /metrics; 0 turns one off. */
export const LIMIT_DEFAULTS = { series: 200_000, metricNameLength: 200, labelNameLength: 100, labelValueLength: 1024 } as const;
const limitsSection = () =>
  section({
    series: z.number().int().min(0).max(100_000_000).default(LIMIT_DEFAULTS.series),
    metric_name_length: z.number().int().min(0).max(100_000).default(LIMIT_DEFAULTS.metricNameLength),
    label_name_length: z.number().int().min(0).max(100_000).default(LIMIT_DEFAULTS.labelNameLength),
    label_value_length: z.number().int().min(0).max(1_000_000).default(LIMIT_DEFAULTS.labelValueLength),
  });

const ACCOUNT_NAME = /^[a-z0-9_-]+$/;

/** The keys of every account mapping, whatever sources exist. */
const ACCOUNT_KEYS = {
  name: z.string().superRefine((name, ctx) => {
    if (!ACCOUNT_NAME.test(name)) {
      ctx.addIssue({
        code: 'custom',
        message: `must use only lowercase letters, digits, _ and - because it becomes the account label (got ${describeValue(name)})`,
      });
    }
  }),
  base_url: z.string().superRefine((text, ctx) => {
    const problem = httpUrlProblem(text) ?? monitoringPathProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
  api_key_env: envVarName.optional(),
  api_key_file: nonEmptyString.optional(),
  auth_scheme: z.enum(['bearer', 'x-api-key']).default('bearer'),
  rate_limit: section({
    requests_per_minute: z.number().int().min(1).max(100_000).default(120),
    burst: z.number().int().min(1).max(100_000).default(30),
  }),
  headroom: z.number().min(0).max(0.9).default(0.1),
  concurrency: z.number().int().min(1).max(64).default(4),
  max_pages_per_list: z.number().int().min(1).max(10_000).default(50),
  http: httpSection(),
  limits: limitsSection(),
  counter_grace: duration(COUNTER_GRACE.default, COUNTER_GRACE.minMs, COUNTER_GRACE.maxMs),
};

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerName = z.string().superRefine((name, ctx) => {
  if (!HTTP_TOKEN.test(name)) ctx.addIssue({ code: 'custom', message: `must be an HTTP header name such as X-RapidAPI-Key (got ${describeValue(name)})` });
});

/** How the release lookups reach their endpoint and when they run; the sources add what to look up. */
const RELEASES_KEYS = {
  mode: z.enum(['free', 'marketplace']).default('free'),
  free_base_url: httpUrl().optional(),
  marketplace_base_url: httpUrl().optional(),
  marketplace_key_env: envVarName.optional(),
  marketplace_key_file: nonEmptyString.optional(),
  marketplace_host: z
    .string()
    .superRefine((host, ctx) => {
      if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host)) {
        ctx.addIssue({ code: 'custom', message: `must be a host name such as releases.p.rapidapi.com (got ${describeValue(host)})` });
      }
    })
    .optional(),
  header_names: section(
    { key: headerName.default('X-RapidAPI-Key'), host: headerName.default('X-RapidAPI-Host') },
    { secretHint: MARKETPLACE_KEY_HINT },
  ),
  schedule: z
    .string()
    .default(DEFAULT_RELEASES_SCHEDULE)
    .superRefine((expression, ctx) => {
      const analysis = analyseCron(expression);
      if (!analysis.ok) ctx.addIssue({ code: 'custom', message: analysis.error });
    }),
  allow_polling_faster_than_cache: z.boolean().default(false),
  http: httpSection(),
};

/** Prometheus' own remote_write queue defaults, where one exporter's few thousand series fit them. */
export const REMOTE_WRITE_DEFAULTS = { pushInterval: '60s', remoteTimeout: '30s', capacity: 10_000, maxSamplesPerSend: 2_000, batchSendDeadline: '5s', minBackoff: '30ms', maxBackoff: '5s' } as const;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const labelMap = z.record(
  z.string().superRefine((name, ctx) => {
    if (!LABEL_NAME.test(name) || name.startsWith('__')) ctx.addIssue({ code: 'custom', message: `must be a label name (letters, digits and _, not starting with __) (got ${describeValue(name)})` });
  }),
  z.string(),
);

/** The optional `remote_write:` section: push what the exporter polls, as Prometheus' own `remote_write` does. */
const REMOTE_WRITE_KEYS = {
  url: httpUrl(),
  push_interval: duration(REMOTE_WRITE_DEFAULTS.pushInterval, SECOND, 10 * MINUTE, 'pushing faster sends the same values again; the data change once a minute at most'),
  remote_timeout: duration(REMOTE_WRITE_DEFAULTS.remoteTimeout, SECOND, 10 * MINUTE, 'a shorter wait fails slow but healthy receivers'),
  headers: z
    .record(
      z.string().superRefine((name, ctx) => {
        if (!HTTP_TOKEN.test(name)) ctx.addIssue({ code: 'custom', message: `must be an HTTP header name such as X-Scope-OrgID (got ${describeValue(name)})` });
        else if (/^(authorization|content-type|content-encoding|content-length|x-prometheus-remote-write-version|user-agent|host)$/i.test(name)) {
          ctx.addIssue({ code: 'custom', message: `is set by the exporter (credentials go in basic_auth or authorization)` });
        }
      }),
      z.string(),
    )
    .default({}),
  external_labels: labelMap.default({}),
  basic_auth: strictObject({ username: nonEmptyString, password_env: envVarName.optional(), password_file: nonEmptyString.optional() }).optional(),
  authorization: strictObject({ type: z.string().regex(HTTP_TOKEN).default('Bearer'), credentials_env: envVarName.optional(), credentials_file: nonEmptyString.optional() }).optional(),
  tls_config: section({
    ca_file: nonEmptyString.optional(),
    cert_file: nonEmptyString.optional(),
    key_file: nonEmptyString.optional(),
    server_name: nonEmptyString.optional(),
    insecure_skip_verify: z.boolean().default(false),
  }),
  queue_config: section({
    capacity: z.number().int().min(100).max(10_000_000).default(REMOTE_WRITE_DEFAULTS.capacity),
    max_samples_per_send: z.number().int().min(1).max(1_000_000).default(REMOTE_WRITE_DEFAULTS.maxSamplesPerSend),
    batch_send_deadline: duration(REMOTE_WRITE_DEFAULTS.batchSendDeadline, 100, 10 * MINUTE),
    min_backoff: duration(REMOTE_WRITE_DEFAULTS.minBackoff, 1, MINUTE),
    max_backoff: duration(REMOTE_WRITE_DEFAULTS.maxBackoff, 1, 10 * MINUTE),
    retry_on_http_429: z.boolean().default(true),
  }),
};

const EXPORTER_KEYS = {
  sample_timestamps: z.boolean().default(false),
  null_handling: z.enum(['skip', 'nan']).default('skip'),
};

const FIELD_PATH = /^[^.\s]+(\.[^.\s]+)*$/;

/** Where a field sits in an answer: keys joined by dots, `stats.last_day.uptime`. */
const fieldPath = z.string().superRefine((path, ctx) => {
  if (!FIELD_PATH.test(path)) ctx.addIssue({ code: 'custom', message: `must be the keys to the field joined by dots, such as stats.last_day.uptime (got ${describeValue(path)})` });
});

/** Where a list sits: a field path, or `.` for the body itself. */
const listPath = z.string().superRefine((path, ctx) => {
  if (path !== '.' && !FIELD_PATH.test(path)) ctx.addIssue({ code: 'custom', message: `must be the keys to the list joined by dots, such as _embedded.websites, or . for the body itself (got ${describeValue(path)})` });
});

/** Keys two specs (or a spec and the fixed keys) both claim: a programming error, caught at start. */
function mergeKeys(into: Record<string, z.ZodType>, from: Readonly<Record<string, z.ZodType>> | undefined, owner: string): void {
  for (const [key, schema] of Object.entries(from ?? {})) {
    if (key in into) throw new Error(`source ${owner} declares the config key ${key}, which is already taken`);
    into[key] = schema;
  }
}

/**
 * The whole file's schema: the fixed keys, and from each source spec its switch under
 * `sources:`, its cadences under `cadence:` and its own keys.
 */
export function buildConfigSchema(specs: readonly SourceConfigSpec[]) {
  const inSection = (section: ConfigSection) => specs.filter((spec) => spec.section === section);
  const toggles: Record<string, z.ZodType> = {};
  const cadences: Record<string, z.ZodType> = {};
  const account: Record<string, z.ZodType> = { ...ACCOUNT_KEYS };
  const releases: Record<string, z.ZodType> = { ...RELEASES_KEYS };
  const exporter: Record<string, z.ZodType> = { ...EXPORTER_KEYS };
  for (const spec of inSection('account')) {
    // A switch whose default follows another source's is left unset here and resolved by load.ts.
    if (spec.toggle) toggles[spec.name] = typeof spec.toggle.default === 'boolean' ? z.boolean().default(spec.toggle.default) : z.boolean().optional();
    for (const [key, cadence] of Object.entries(spec.cadences ?? {})) {
      if (key in cadences) throw new Error(`source ${spec.name} declares the cadence ${key}, which is already taken`);
      cadences[key] = duration(cadence.default, cadence.minMs, CADENCE_MAX_MS, cadence.tooShort);
    }
    mergeKeys(account, spec.keys, spec.name);
  }
  for (const spec of inSection('releases')) mergeKeys(releases, spec.keys, spec.name);
  for (const spec of specs) mergeKeys(exporter, spec.exporterKeys, spec.name);
  account.cadence = section(cadences);
  account.sources = section(toggles);
  const fields: Record<string, z.ZodType> = {};
  for (const spec of inSection('account')) {
    if (spec.fields === undefined) continue;
    // A source that reads a list may also have the list and its next page placed (`_list`, `_next`).
    const placeable = [...Object.keys(spec.fields), ...(spec.readsList === true ? [LIST_PATH_KEY, NEXT_PAGE_KEY] : [])];
    fields[spec.name] = section(Object.fromEntries(placeable.map((field) => [field, field === LIST_PATH_KEY ? listPath.optional() : fieldPath.optional()])));
  }
  account.fields = section(fields);

  const accountSchema = strictObject(account);
  const releasesSchema = strictObject(releases, { secretHint: MARKETPLACE_KEY_HINT });
  return strictObject({
    exporter: section(exporter, {
      fixed: { metric_prefix: 'cannot be set: metric names always start with "monapi_" so that dashboards and alerts keep working' },
    }),
    accounts: z
      .array(accountSchema, { error: (issue) => (issue.input === undefined ? 'is required: list at least one Monitoring API account' : undefined) })
      .min(1, 'must list at least one account'),
    releases: z.preprocess((value) => (value === null ? undefined : value), releasesSchema.optional()),
    remote_write: z.preprocess((value) => (value === null ? undefined : value), strictObject(REMOTE_WRITE_KEYS).optional()),
  });
}

type Fixed<Keys extends Record<string, z.ZodType>> = { [K in keyof Keys]: z.output<Keys[K]> };
/** Each section as parsed: the fixed keys typed, the sources' keys as the sources read them. */
export type RawAccount = Fixed<typeof ACCOUNT_KEYS> & {
  readonly cadence: Readonly<Record<string, number>>;
  readonly sources: Readonly<Record<string, boolean | undefined>>;
  readonly fields: Readonly<Record<string, Readonly<Record<string, string | undefined>>>>;
} & Readonly<Record<string, unknown>>;
export type RawReleases = Fixed<typeof RELEASES_KEYS> & Readonly<Record<string, unknown>>;
export type RawExporter = Fixed<typeof EXPORTER_KEYS> & Readonly<Record<string, unknown>>;
export type RawRemoteWrite = Fixed<typeof REMOTE_WRITE_KEYS>;
export interface RawConfig {
  readonly exporter: RawExporter;
  readonly accounts: readonly RawAccount[];
  readonly releases: RawReleases | undefined;
  readonly remote_write: RawRemoteWrite | undefined;
}

/** A short, safe description of a value for messages; long strings are cut. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    // Scrubbed before it is cut and quoted: a key pasted into the wrong field must not be left escaped or in part.
    const shown = processRedactor.scrub(value);
    return JSON.stringify(shown.length > 60 ? `${shown.slice(0, 57)}...` : shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

/** Wording for zod's generic issues; undefined keeps zod's own. */
export function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  const got = `(got ${describeValue(issue.input)})`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${EXPECTED[issue.expected] ?? issue.expected} ${got}`;
    case 'too_small': {
      const minimum = Number(issue.minimum);
      if (issue.origin === 'array' || issue.origin === 'set') return `must list at least ${minimum} item${minimum === 1 ? '' : 's'}`;
      if (issue.origin === 'string') return 'must not be empty';
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${minimum} ${got}`;
    }
    case 'too_big': {
      const maximum = Number(issue.maximum);
      if (issue.origin === 'array' || issue.origin === 'set') return `must list at most ${maximum} items`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${maximum} ${got}`;
    }
    case 'invalid_key':
      // The key schema's own words (a software name, say), not zod's "Invalid key in record".
      return issue.issues[0]?.message;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')} ${got}`;
    default:
      return undefined;
  }
}
