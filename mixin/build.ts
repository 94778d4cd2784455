import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderRules } from './alerts.js';
import { DEFAULT_CONFIG } from './config.js';
import { dashboards } from './dashboards/index.js';

/**
 * Writes every generated artefact of the mixin: `npm run mixin`. The TypeScript in mixin/
 * is the one source; these files are its output, checked in so that users and the Helm
 * chart can take them as they are. test/mixin/generated.test.ts fails when one differs
 * from what this would write.
 */

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const RULES_FILE = 'alerts/monapi-exporter.rules.yaml';
export const DASHBOARDS_DIR = 'grafana-dashboards';
const CHART_FILES = 'helm/monapi-exporter/files';

/** Folders whose every file is generated here: a file not in `generatedFiles()` is stale. */
export const GENERATED_DIRS = [DASHBOARDS_DIR, `${CHART_FILES}/dashboards`, `${CHART_FILES}/rules`];

/** Path relative to the repository root -> content. */
export function generatedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const rules = renderRules(DEFAULT_CONFIG);
  files.set(RULES_FILE, rules);
  files.set(`${CHART_FILES}/rules/monapi-exporter.rules.yaml`, rules);
  for (const [name, dashboard] of Object.entries(dashboards())) {
    const json = `${JSON.stringify(dashboard, null, 2)}\n`;
    files.set(`${DASHBOARDS_DIR}/${name}.json`, json);
    files.set(`${CHART_FILES}/dashboards/${name}.json`, json);
  }
  return files;
}

function main(): void {
  const files = generatedFiles();
  for (const dir of GENERATED_DIRS) {
    mkdirSync(join(ROOT, dir), { recursive: true });
    for (const name of readdirSync(join(ROOT, dir))) {
      if (!files.has(`${dir}/${name}`)) rmSync(join(ROOT, dir, name));
    }
  }
  for (const [path, content] of files) {
    mkdirSync(dirname(join(ROOT, path)), { recursive: true });
    writeFileSync(join(ROOT, path), content);
  }
  process.stdout.write(`mixin: wrote ${files.size} files\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
