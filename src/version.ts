import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    // Same relative path from src/ (tsx) and from dist/ (built).
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const EXPORTER_VERSION = readVersion();
