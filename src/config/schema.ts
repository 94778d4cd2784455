/**
 * The shape of the YAML file, in zod 4: types, ranges, formats and defaults of each field.
 * Rules that relate several fields (exactly one key source, unique names, the release
 * schedule against the free endpoint's cache) are checked afterwards in `load.ts`.
 * Every message says what is wrong in words an operator can act on; `issueMessage` turns
 * zod's generic issues into such words.
 */
import { z } from 'zod';
import { analyseCron } from './cron.js';
import { formatDuration, parseDuration } from './duration.js';
import { patternProblem, tagLabelProblem, type PatternKind } from './patterns.js';
import { bucketsProblem, DEFAULT_CHECK_BUCKETS } from '../sources/checks/map.js';
import { MAJOR_LINE_PATTERN } from '../upstream/releases/version.js';
import { DEFAULT_LINE_POLICY, LINE_POLICIES } from '../sources/outdated/software.js';
import { DEFAULT_RELEASES_SCHEDULE } from './types.js';

export const ACCOUNT_KEY_HINT =
  'API keys must not be written in the config file: set api_key_env (the name of an environment variable holding the key) or api_key_file (the path of a file holding the key)';
export const MARKETPLACE_KEY_HINT =
  'API keys must not be written in the config file: set marketplace_key_env (the name of an environment variable holding the key) or marketplace_key_file (the path of a file holding the key)';

/** Keys that look like they hold a credential. */
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
  if (SECRET_LOOKING_KEY.test(key)) return `unknown key ${JSON.stringify(key)}: ${params.secretHint}`;
  const suggestion = suggest(key, params.known);
  if (suggestion !== undefined) return `unknown key ${JSON.stringify(key)} (did you mean ${JSON.stringify(suggestion)}?)`;
  return `unknown key ${JSON.stringify(key)} (allowed: ${params.known.join(', ')})`;
}

/** A mapping whose unknown keys are errors. */
function strictObject<Shape extends z.core.$ZodLooseShape>(
  shape: Shape,
  options: { secretHint?: string; fixed?: Readonly<Record<string, string>> } = {},
) {
  return z.object(shape).catchall(unknownKeyCatchall(Object.keys(shape), options.secretHint ?? ACCOUNT_KEY_HINT, options.fixed ?? {}));
}

// Every field of a section has a default, which the generic Shape cannot show the compiler.
const EMPTY_SECTION = {} as never;

/** An optional mapping: absent or empty (`cadence:` with everything commented out) means all defaults. */
function section<Shape extends z.core.$ZodLooseShape>(shape: Shape, options: { secretHint?: string; fixed?: Readonly<Record<string, string>> } = {}) {
  return z.preprocess((value) => (value === null ? undefined : value), strictObject(shape, options).prefault(EMPTY_SECTION));
}

function list<Item extends z.ZodType>(item: Item, fallback: z.output<Item>[]) {
  return z.preprocess((value) => (value === null ? undefined : value), z.array(item).default(fallback));
}

function globList(kind: PatternKind, fallback: string[]) {
  return list(
    z.string().superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern, kind);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    fallback,
  );
}

/** A duration string turned into milliseconds, with a default and bounds. */
function duration(fallback: string, minMs: number, maxMs: number, tooShort = 'polling faster would spend the request budget') {
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

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Defaults and minimums of every cadence. Minimums stop a typo from draining the shared budget. */
export const CADENCES = {
  hosts: { default: '60s', minMs: 30 * SECOND },
  websites: { default: '60s', minMs: 30 * SECOND },
  account: { default: '5m', minMs: MINUTE },
  alerts: { default: '60s', minMs: 30 * SECOND },
  alert_rules: { default: '10m', minMs: MINUTE },
  // Series points are 60 s apart, so polling faster re-reads the same points.
  series: { default: '60s', minMs: MINUTE },
  series_offline: { default: '10m', minMs: MINUTE },
  metric_catalogue: { default: '1h', minMs: 5 * MINUTE },
  components: { default: '1h', minMs: 5 * MINUTE },
  checks: { default: '60s', minMs: 30 * SECOND },
  // Uptime over days, TTFB aggregates and certificate expiry change slowly; one request per website.
  website_summary: { default: '15m', minMs: 5 * MINUTE },
  // Only hosts whose list item lacks fields are asked; their names and tags rarely change.
  host_details: { default: '1h', minMs: 5 * MINUTE },
} as const;
export const CADENCE_MAX_MS = DAY;
export const INGEST_DELAY = { default: '3m', minMs: 0, maxMs: 2 * HOUR } as const;
// The series window must reach back over the horizon and stay within 4 h (60 s points).
export const LATE_DATA_HORIZON = { default: '2h', minMs: 0, maxMs: 3 * HOUR + 30 * MINUTE } as const;
export const COUNTER_GRACE = { default: '1h', minMs: 0, maxMs: DAY } as const;

const cadenceShape = Object.fromEntries(
  Object.entries(CADENCES).map(([key, spec]) => [key, duration(spec.default, spec.minMs, CADENCE_MAX_MS)]),
) as { [K in keyof typeof CADENCES]: ReturnType<typeof duration> };

function httpUrl() {
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
const envVarName = z.string().superRefine((name, ctx) => {
  if (!ENV_NAME.test(name)) {
    ctx.addIssue({ code: 'custom', message: 'must be the name of an environment variable (letters, digits and _, not starting with a digit), not the key itself' });
  }
});

const nonEmptyString = z.string().min(1);

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

const accountSchema = strictObject({
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
  http: httpSection(),
  limits: limitsSection(),
  hosts: section({
    include_tags: globList('tag', []),
    exclude_tags: globList('tag', []),
    include_names: globList('name', []),
    exclude_names: globList('name', []),
  }),
  metrics: section({
    include: z.preprocess(
      (value) => (value === null ? undefined : value),
      z
        .array(
          z.string().superRefine((pattern, ctx) => {
            const problem = patternProblem(pattern, 'metric');
            if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
          }),
        )
        .min(1, 'must list at least one pattern; use ["*"] for every metric, or turn the series source off')
        .default(['*']),
    ),
    exclude: globList('metric', []),
  }),
  tag_labels: list(
    z.string().superRefine((key, ctx) => {
      const problem = tagLabelProblem(key);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    [],
  ),
  cadence: section(cadenceShape),
  ingest_delay: duration(INGEST_DELAY.default, INGEST_DELAY.minMs, INGEST_DELAY.maxMs),
  late_data_horizon: duration(LATE_DATA_HORIZON.default, LATE_DATA_HORIZON.minMs, LATE_DATA_HORIZON.maxMs),
  counter_grace: duration(COUNTER_GRACE.default, COUNTER_GRACE.minMs, COUNTER_GRACE.maxMs),
  metric_overrides: z.preprocess(
    (value) => (value === null ? undefined : value),
    z
      .record(
        z.string(),
        strictObject({
          kind: z.enum(['gauge', 'delta']).optional(),
          unit: z.enum(['percent', 'bytes', 'kilobytes', 'milliseconds', 'seconds', 'count', 'status', 'none']).optional(),
          family: z.string().optional(),
          labels: z.record(z.string(), z.string()).optional(),
          device_label: z.string().optional(),
        }),
      )
      .default({}),
  ),
  websites: section({
    include_names: globList('name', []),
    exclude_names: globList('name', []),
  }),
  sources: section({
    hosts: z.boolean().default(true),
    // Default: on whenever hosts is (it completes the host list).
    host_details: z.boolean().optional(),
    series: z.boolean().default(true),
    components: z.boolean().default(true),
    websites: z.boolean().default(true),
    // Default: on whenever websites is (it completes the website list).
    website_summary: z.boolean().optional(),
    checks: z.boolean().default(true),
    alerts: z.boolean().default(true),
    alert_rules: z.boolean().default(true),
    account: z.boolean().default(true),
  }),
});

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const OWNER_REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9._-]+$/;

function projectIdProblem(id: string): string | undefined {
  if (PROJECT_NAME.test(id) || OWNER_REPO.test(id)) return undefined;
  if (/^https?:\/\//.test(id) && httpUrlProblem(id) === undefined) return undefined;
  return `must be a project name (nginx), an owner/repository (torvalds/linux) or an http(s) URL (got ${describeValue(id)})`;
}

/**
 * A major line as the service takes it: a prefix of the version ending at a dot, such as
 * `4`, `0` or `1.26`. load.ts hands a number over as written (`1.20` stays `1.20`).
 */
const majorVersion = z
  .unknown()
  .optional()
  .transform((value, ctx): string | undefined => {
    if (value === undefined) return undefined;
    const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : typeof value === 'string' ? value.trim() : undefined;
    if (text === undefined || !MAJOR_LINE_PATTERN.test(text)) {
      ctx.addIssue({ code: 'custom', message: `must be a version line such as 4, 0 or 1.26: numbers separated by dots (got ${describeValue(value)})` });
      return z.NEVER;
    }
    return text;
  });

const projectSchema = z.preprocess(
  (value) => (typeof value === 'string' ? { id: value } : value),
  strictObject({
    id: z.string().superRefine((id, ctx) => {
      const problem = projectIdProblem(id);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    major: majorVersion,
  }),
);

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerName = z.string().superRefine((name, ctx) => {
  if (!HTTP_TOKEN.test(name)) ctx.addIssue({ code: 'custom', message: `must be an HTTP header name such as X-RapidAPI-Key (got ${describeValue(name)})` });
});

const SOFTWARE_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/** A project of the outdated check's table, or `false`: that software is not checked. */
const outdatedProject = z.unknown().transform((value, ctx): string | false => {
  if (value === false) return false;
  const problem = typeof value === 'string' ? projectIdProblem(value) : `must be a project id such as nginx/nginx, or false to not check this software (got ${describeValue(value)})`;
  if (problem !== undefined) {
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }
  return value as string;
});

/** `nginx: nginx/nginx`, `nginx: {project: nginx/nginx, line: major}` or `nginx: false`. */
const outdatedEntry = z.preprocess(
  (value) => (typeof value === 'object' && value !== null ? value : { project: value }),
  strictObject({ project: outdatedProject, line: z.enum(LINE_POLICIES).optional() }),
);

const outdatedSchema = section({
  enabled: z.boolean().default(true),
  line: z.enum(LINE_POLICIES).default(DEFAULT_LINE_POLICY),
  projects: z.preprocess(
    (value) => (value === null ? undefined : value),
    z
      .record(
        z.string().superRefine((name, ctx) => {
          if (!SOFTWARE_NAME.test(name)) {
            ctx.addIssue({ code: 'custom', message: `software names are lowercase letters, digits, ., _ and -, as the component's type (got ${describeValue(name)})` });
          }
        }),
        outdatedEntry,
      )
      .default({}),
  ),
});

const releasesSchema = strictObject(
  {
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
    projects: list(projectSchema, []),
    outdated: outdatedSchema,
  },
  { secretHint: MARKETPLACE_KEY_HINT },
);

function bucketList(fallback: readonly number[]) {
  return list(z.number(), [...fallback]).superRefine((bounds, ctx) => {
    const problem = bucketsProblem(bounds);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

export const rawConfigSchema = strictObject({
  exporter: section(
    {
      sample_timestamps: z.boolean().default(false),
      null_handling: z.enum(['skip', 'nan']).default('skip'),
      check_buckets: section({
        ttfb: bucketList(DEFAULT_CHECK_BUCKETS.ttfb),
        dns_lookup: bucketList(DEFAULT_CHECK_BUCKETS.dnsLookup),
        tls_handshake: bucketList(DEFAULT_CHECK_BUCKETS.tlsHandshake),
      }),
    },
    { fixed: { metric_prefix: 'cannot be set: metric names always start with "monapi_" so that dashboards and alerts keep working' } },
  ),
  accounts: z
    .array(accountSchema, { error: (issue) => (issue.input === undefined ? 'is required: list at least one Monitoring API account' : undefined) })
    .min(1, 'must list at least one account'),
  releases: z.preprocess((value) => (value === null ? undefined : value), releasesSchema.optional()),
});

export type RawConfig = z.output<typeof rawConfigSchema>;
export type RawAccount = RawConfig['accounts'][number];
export type RawReleases = NonNullable<RawConfig['releases']>;

/** A short, safe description of a value for messages; long strings are cut. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
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
