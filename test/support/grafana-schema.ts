import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { createGenerator, type Schema } from 'ts-json-schema-generator';

/**
 * JSON Schemas of Grafana's dashboard model, made from the TypeScript types of
 * `@grafana/schema` (the types Grafana itself is built with) by ts-json-schema-generator,
 * and compiled with ajv. Objects described by an interface allow no other properties, so
 * a misspelt or unknown field fails, not only a wrong type.
 *
 * Generating takes about 15 s (a TypeScript program per type), so the schemas are cached
 * in node_modules/.cache, keyed by the @grafana/schema version.
 */

const require = createRequire(import.meta.url);
const PACKAGE_DIR = dirname(require.resolve('@grafana/schema/package.json'));
const SCHEMA_TYPES = join(PACKAGE_DIR, 'dist/types');
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const CACHE = join(PACKAGE_DIR, '../../.cache/monapi-grafana-schema', `${VERSION}-v2.json`);

/** Panel plugins (by the `type` of a panel) whose options have a schema in @grafana/schema, and the folder of that schema. */
const PANEL_SCHEMA_DIRS = { timeseries: 'timeseries', stat: 'stat', table: 'table', bargauge: 'bargauge', 'state-timeline': 'statetimeline' } as const;
export type PanelType = keyof typeof PANEL_SCHEMA_DIRS;
export const PANEL_TYPES = Object.keys(PANEL_SCHEMA_DIRS) as PanelType[];
/** The panel types with field config of their own (fieldConfig.defaults.custom). */
const WITH_FIELD_CONFIG: readonly PanelType[] = ['timeseries', 'table', 'state-timeline'];

interface Schemas {
  dashboard: Schema;
  panelOptions: Record<string, Schema>;
  panelFieldConfig: Record<string, Schema>;
}

function generate(file: string, type: string): Schema {
  return createGenerator({ path: join(SCHEMA_TYPES, file), type, skipTypeCheck: true, topRef: true, additionalProperties: false }).createSchema(type);
}

function schemas(): Schemas {
  if (existsSync(CACHE)) return JSON.parse(readFileSync(CACHE, 'utf8')) as Schemas;
  const panelcfg = (panel: PanelType): string => `raw/composable/${PANEL_SCHEMA_DIRS[panel]}/panelcfg/x/types.gen.d.ts`;
  const result: Schemas = {
    dashboard: generate('raw/dashboard/x/types.gen.d.ts', 'Dashboard'),
    panelOptions: Object.fromEntries(PANEL_TYPES.map((panel) => [panel, generate(panelcfg(panel), 'Options')])),
    panelFieldConfig: Object.fromEntries(WITH_FIELD_CONFIG.map((panel) => [panel, generate(panelcfg(panel), 'FieldConfig')])),
  };
  mkdirSync(dirname(CACHE), { recursive: true });
  // Written whole and renamed, so a test run in parallel never reads half a file.
  const partial = `${CACHE}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(result));
  renameSync(partial, CACHE);
  return result;
}

/** An ajv validator, without ajv's type guard (the objects checked are typed already). */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

export interface DashboardValidators {
  readonly schemaVersion: string;
  dashboard: Validator;
  panelOptions: Record<PanelType, Validator>;
  /** fieldConfig.defaults.custom, for the panel types that have one. */
  panelFieldConfig: Partial<Record<PanelType, Validator>>;
}

export function dashboardValidators(): DashboardValidators {
  const all = schemas();
  const ajv = new Ajv({ allErrors: true, strict: false });
  const compile = (schema: Schema): Validator => ajv.compile(schema);
  return {
    schemaVersion: VERSION,
    dashboard: compile(all.dashboard),
    panelOptions: Object.fromEntries(PANEL_TYPES.map((panel) => [panel, compile(all.panelOptions[panel]!)])) as Record<PanelType, Validator>,
    panelFieldConfig: Object.fromEntries(WITH_FIELD_CONFIG.map((panel) => [panel, compile(all.panelFieldConfig[panel]!)])),
  };
}

export const isPanelType = (type: string): type is PanelType => (PANEL_TYPES as readonly string[]).includes(type);

/** ajv's errors as lines naming the path, for an assertion message. */
export function describeErrors(validate: Validator): string[] {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}
