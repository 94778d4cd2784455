import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { SIMULATOR_DEFAULTS, startSimulator, type RunningSimulator, type SimulatorOptions } from './index.js';
import { LATE_DATA_DEFAULTS, lateDataSettings, MAX_LATENESS_MINUTES, type LateDataSettings } from './monitoring/late-data.js';
import { parseShapeOverrides, parseShapeSet, SHAPE_ENDPOINTS } from './shapes/shapes.js';
import { DEFAULT_PAGE_SIZE, describeLayout, MAX_PAGE_SIZE, parseLayoutFlag, type LayoutUpdate } from './layouts/layout.js';

export const USAGE = `Usage: npm run simulator -- [flags]

Runs the simulated Monitoring REST API, the free Release Lookup endpoint and the
marketplace endpoints until SIGINT or SIGTERM.

  --monitoring-port N    Monitoring API listener (default ${SIMULATOR_DEFAULTS.monitoringPort}; 0 = any free port)
  --releases-port N      Free Release Lookup listener (default ${SIMULATOR_DEFAULTS.releasesPort})
  --marketplace-port N   Marketplace listener (default ${SIMULATOR_DEFAULTS.marketplacePort})
  --listen-host HOST     Address to listen on (default ${SIMULATOR_DEFAULTS.listenHost})
  --hosts N              Hosts per account (default ${SIMULATOR_DEFAULTS.hosts})
  --websites N           Websites per account (default ${SIMULATOR_DEFAULTS.websites})
  --seed S               Seed of the simulated data (default ${SIMULATOR_DEFAULTS.seed})
  --rate-limit N         Monitoring requests per minute per API key (default ${SIMULATOR_DEFAULTS.rateLimitPerMinute})
  --burst N              Monitoring burst per API key (default ${SIMULATOR_DEFAULTS.burst})
  --no-retry-after       Send no Retry-After header on the monitoring API's 429
  --shapes SET           Shape set of the bodies the seeds leave "not shown": standard
                         (default), alt or nested, the same data in other legal layouts
                         (nested: values under period and category keys, lists grouped
                         by kind, states as words, numbers as strings)
  --shape ENDPOINT=SET   Override one endpoint's shape set (repeatable, or comma-separated):
                         ${SHAPE_ENDPOINTS.join(', ')}
  --layout L[,L]         List layout, orthogonal to the shape sets: hal, jsonapi or envelope
                         (a {success, result, result_info} wrapper), and/or paged (lists in
                         pages: /hosts, /websites, /alerts, components, metrics); e.g. hal,paged
  --page-size N          Items per page, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); implies paged
  --page-fail-after N    Pages after page N answer 503 (a fault for tests); implies paged
  --late-data            Late data: a share of minutes arrive late, a share never
                         (ground truth: GET /_sim/truth); the tunables below imply it
  --late-share X         Share of minutes that arrive late, 0-1 (default ${LATE_DATA_DEFAULTS.lateShare})
  --late-max-minutes N   Longest lateness in minutes, 1-${MAX_LATENESS_MINUTES} (default ${LATE_DATA_DEFAULTS.maxLatenessMinutes})
  --late-never X         Share of minutes that never arrive, 0-1 (default ${LATE_DATA_DEFAULTS.neverShare})
  --help                 Show this text
`;

export type CliParse = { kind: 'run'; options: SimulatorOptions } | { kind: 'help' } | { kind: 'error'; message: string };

const INTEGER_FLAGS = {
  'monitoring-port': { option: 'monitoringPort', min: 0, max: 65_535 },
  'releases-port': { option: 'releasesPort', min: 0, max: 65_535 },
  'marketplace-port': { option: 'marketplacePort', min: 0, max: 65_535 },
  hosts: { option: 'hosts', min: 0, max: 100_000 },
  websites: { option: 'websites', min: 0, max: 10_000 },
  'rate-limit': { option: 'rateLimitPerMinute', min: 1, max: 1_000_000_000 },
  burst: { option: 'burst', min: 1, max: 1_000_000_000 },
} as const;

/** Reads the command line; every bad value is an error naming its flag. */
export function parseCliArgs(argv: readonly string[]): CliParse {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'monitoring-port': { type: 'string' },
        'releases-port': { type: 'string' },
        'marketplace-port': { type: 'string' },
        'listen-host': { type: 'string' },
        hosts: { type: 'string' },
        websites: { type: 'string' },
        seed: { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        'no-retry-after': { type: 'boolean' },
        shapes: { type: 'string' },
        shape: { type: 'string', multiple: true },
        'late-data': { type: 'boolean' },
        'late-share': { type: 'string' },
        'late-max-minutes': { type: 'string' },
        'late-never': { type: 'string' },
        layout: { type: 'string', multiple: true },
        'page-size': { type: 'string' },
        'page-fail-after': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { kind: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help) return { kind: 'help' };

  const options: SimulatorOptions = {};
  for (const [flag, rule] of Object.entries(INTEGER_FLAGS)) {
    const raw = values[flag];
    if (typeof raw !== 'string') continue;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < rule.min || Number(raw) > rule.max) {
      return { kind: 'error', message: `--${flag} must be an integer from ${rule.min} to ${rule.max}; got '${raw}'` };
    }
    options[rule.option] = Number(raw);
  }
  if (typeof values['listen-host'] === 'string') {
    if (values['listen-host'].trim() === '') return { kind: 'error', message: '--listen-host must not be empty' };
    options.listenHost = values['listen-host'];
  }
  if (typeof values.seed === 'string') {
    if (values.seed === '') return { kind: 'error', message: '--seed must not be empty' };
    options.seed = values.seed;
  }
  if (values['no-retry-after']) options.retryAfter = false;
  if (typeof values.shapes === 'string') {
    const set = parseShapeSet('--shapes', values.shapes);
    if (!set.ok) return { kind: 'error', message: set.message };
    options.shapes = set.value;
  }
  if (Array.isArray(values.shape)) {
    const overrides = parseShapeOverrides(values.shape);
    if (!overrides.ok) return { kind: 'error', message: `--shape: ${overrides.message}` };
    options.shapeOverrides = overrides.value;
  }
  const late = parseLateFlags(values);
  if (!late.ok) return { kind: 'error', message: late.message };
  if (late.value) options.lateData = late.value;
  const layout = parseLayoutFlags(values);
  if (!layout.ok) return { kind: 'error', message: layout.message };
  if (layout.value) options.layout = layout.value;
  return { kind: 'run', options };
}

function parseLayoutFlags(values: Record<string, unknown>): { ok: true; value: LayoutUpdate | undefined } | { ok: false; message: string } {
  const layout: { -readonly [K in keyof LayoutUpdate]: LayoutUpdate[K] } = {};
  if (Array.isArray(values.layout)) {
    const parsed = parseLayoutFlag(values.layout.join(','));
    if (!parsed.ok) return parsed;
    Object.assign(layout, parsed.value);
  }
  for (const [flag, field, max] of [['page-size', 'pageSize', MAX_PAGE_SIZE], ['page-fail-after', 'pageFailAfter', 1_000_000]] as const) {
    const raw = values[flag];
    if (typeof raw !== 'string') continue;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) return { ok: false, message: `--${flag} must be an integer from 1 to ${max}; got '${raw}'` };
    layout[field] = Number(raw);
    layout.paged = true;
  }
  return { ok: true, value: Object.keys(layout).length > 0 ? layout : undefined };
}

function parseLateFlags(values: Record<string, unknown>): { ok: true; value: Partial<LateDataSettings> | true | undefined } | { ok: false; message: string } {
  const settings: { -readonly [K in keyof LateDataSettings]?: LateDataSettings[K] } = {};
  const share = (flag: string, key: 'lateShare' | 'neverShare'): string | undefined => {
    const raw = values[flag];
    if (typeof raw !== 'string') return undefined;
    if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(raw)) return `--${flag} must be a share from 0 to 1; got '${raw}'`;
    settings[key] = Number(raw);
    return undefined;
  };
  const problem = share('late-share', 'lateShare') ?? share('late-never', 'neverShare');
  if (problem) return { ok: false, message: problem };
  const max = values['late-max-minutes'];
  if (typeof max === 'string') {
    if (!/^[0-9]+$/.test(max) || Number(max) < 1 || Number(max) > MAX_LATENESS_MINUTES) {
      return { ok: false, message: `--late-max-minutes must be an integer from 1 to ${MAX_LATENESS_MINUTES}; got '${max}'` };
    }
    settings.maxLatenessMinutes = Number(max);
  }
  if (Object.keys(settings).length > 0) {
    try {
      lateDataSettings(settings);
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    return { ok: true, value: settings };
  }
  return { ok: true, value: values['late-data'] ? true : undefined };
}

export async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseCliArgs(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`simulator: ${parsed.message}\n\n${USAGE}`);
    return 2;
  }
  let sim;
  try {
    sim = await startSimulator(parsed.options);
  } catch (error) {
    process.stderr.write(`simulator: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  // These keys belong to the simulator and are meant to be public.
  process.stdout.write(
    [
      'Simulator running.',
      `  Monitoring API:      ${sim.monitoringBaseUrl}`,
      `  Release Lookup free: ${sim.releasesBaseUrl}`,
      `  Marketplace:         ${sim.marketplaceBaseUrl}`,
      `  Control (/_sim):     ${sim.adminUrl}`,
      'Keys:',
      `  pro:         ${sim.keys.pro}`,
      `  business:    ${sim.keys.business}`,
      `  starter:     ${sim.keys.starter} (answers 403 plan_required)`,
      `  marketplace: ${sim.keys.marketplace} (X-RapidAPI-Key)`,
      `  marketplace, not subscribed: ${sim.keys.marketplaceUnsubscribed} (answers 403 not_subscribed)`,
      `Shapes: ${describeShapes(sim.shapes.selected())}`,
      `Layout: ${describeLayout(sim.layout.settings())}`,
      `Late data: ${sim.lateData ? `${sim.lateData.lateShare} of minutes up to ${sim.lateData.maxLatenessMinutes} min late, ${sim.lateData.neverShare} never (truth: ${sim.adminUrl}/truth)` : 'off'}`,
      '',
    ].join('\n'),
  );
  const running = sim;
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.stdout.write(`Received ${signal}, closing.\n`);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
  return 0;
}

function describeShapes(selection: ReturnType<RunningSimulator['shapes']['selected']>): string {
  const overrides = Object.entries(selection.endpoints).map(([endpoint, set]) => `${endpoint}=${set}`);
  return overrides.length === 0 ? selection.default : `${selection.default}, except ${overrides.join(', ')}`;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`simulator: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
