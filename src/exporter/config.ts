import { createConfigLoader } from '../config/load.js';
import { summarizeConfig as summarize } from '../config/summary.js';
import type { Config } from '../config/types.js';
import { SOURCES } from '../sources/index.js';

/**
 * The configuration of this exporter: the fixed keys, and every source's switch, cadences
 * and keys from the list in src/sources/index.ts. Throws `ConfigError`.
 *
 * `loadConfig('/etc/monapi/monapi-exporter.yaml', process.env)`
 */
const loader = createConfigLoader(SOURCES);

export const loadConfig: typeof loader.loadConfig = (path, env, readFile) => loader.loadConfig(path, env, readFile);
export const parseConfig: typeof loader.parseConfig = (text, options) => loader.parseConfig(text, options);

/** What `--config.check` prints: what was configured, and nothing secret. */
export function summarizeConfig(config: Config, source: string): string {
  return summarize(config, source, SOURCES);
}
